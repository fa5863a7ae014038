"""Plain-language helpers for the scripts: politeness stripped, dates and routes in common forms.

Only the wording people use for the requests the scripts know; not a parser of English.
"""

from __future__ import annotations

import re
from datetime import date

GREETING = r"(?:(?:hi|hello|hey)(?:\s+there)?\b[\s,!.]*)"
ASKING = r"(?:(?:please|kindly|could\s+you|can\s+you|would\s+you|will\s+you|i\s+need\s+you\s+to)\b[\s,]*)"
POLITE_START = re.compile(rf"^\s*{GREETING}?{ASKING}*", re.IGNORECASE)
POLITE_END = re.compile(
    r"(?:[\s,;:]*(?:please|thanks(?:\s+a\s+lot)?|thank\s+you|cheers|thx|for\s+me)\b[\s.!?]*)+$", re.IGNORECASE
)
MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
MONTH = r"(?P<month>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
DATE = re.compile(
    r"\b(?:"
    r"(?P<iso_year>\d{4})[-/](?P<iso_month>\d{1,2})[-/](?P<iso_day>\d{1,2})"
    r"|(?P<eu_day>\d{1,2})[./](?P<eu_month>\d{1,2})[./](?P<eu_year>\d{4})"
    rf"|(?:the\s+)?{DAY}\s+(?:of\s+)?{MONTH},?\s+(?P<year>\d{{4}})"
    rf"|{MONTH.replace('month', 'month2')}\s+(?P<day2>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<year2>\d{{4}})"
    r")\b",
    re.IGNORECASE,
)


def plain(text: str) -> str:
    """The request without greetings, 'please', 'could you', 'thanks' around it, or final punctuation."""
    text = POLITE_START.sub("", text.strip())
    return POLITE_END.sub("", text).rstrip(" .!?")


def find_date(text: str) -> str | None:
    """The first date in `text` as YYYY-MM-DD, or None.

    Read: 2026-12-18, 2026/12/18, 18.12.2026, 18/12/2026 (day first), 18 December 2026,
    the 18th of Dec 2026, December 18, 2026.
    """
    for match in DATE.finditer(text):
        parts = match.groupdict()
        if parts["iso_year"]:
            year, month, day = parts["iso_year"], parts["iso_month"], parts["iso_day"]
        elif parts["eu_year"]:
            year, month, day = parts["eu_year"], parts["eu_month"], parts["eu_day"]
        elif parts["year"]:
            year, month, day = parts["year"], str(MONTHS[parts["month"].lower()]), parts["day"]
        else:
            year, month, day = parts["year2"], str(MONTHS[parts["month2"].lower()]), parts["day2"]
        try:
            return date(int(year), int(month), int(day)).isoformat()
        except ValueError:
            continue
    return None
