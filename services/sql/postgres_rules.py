"""What the SQL console may run on PostgreSQL: one statement of a listed kind, built of listed parts.

PostgreSQL has no authorizer, so the statement is parsed first by PostgreSQL's own parser
(libpg_query, through pglast) and every node of the tree must be on the lists below: statement
kinds, expression nodes, functions (`pg_read_file`, `lo_import`, `dblink`, `set_config`, ... are
not), and relations outside the system catalogs. The database's own privileges come on top: an
ordinary role (as `deploy/` makes) cannot read the server's files whatever it sends. Not for SQLite
(`sqlite_rules`) nor for time and row limits (`statements`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pglast import ast, parse_sql
from pglast.enums import AlterTableType, ObjectType
from pglast.parser import ParseError

from services.errors import BusinessRuleError

if TYPE_CHECKING:
    from collections.abc import Iterator

STATEMENTS = frozenset(
    {"SelectStmt", "InsertStmt", "UpdateStmt", "DeleteStmt", "CreateStmt", "IndexStmt", "AlterTableStmt"}
    | {"DropStmt", "TruncateStmt", "RenameStmt"}
)
"""Statement kinds: reads and writes of rows; CREATE, ALTER, RENAME, DROP, TRUNCATE of tables and indexes."""

PARTS = frozenset(
    {"RawStmt", "A_ArrayExpr", "A_Const", "A_Expr", "A_Indices", "A_Indirection", "A_Star", "Alias"}
    | {"AlterTableCmd", "BitString", "Boolean", "BoolExpr", "BooleanTest", "CaseExpr", "CaseWhen"}
    | {"CoalesceExpr", "CollateClause", "ColumnDef", "ColumnRef", "CommonTableExpr", "Constraint", "Float"}
    | {"FuncCall", "GroupingSet", "IndexElem", "InferClause", "Integer", "JoinExpr", "MinMaxExpr"}
    | {"MultiAssignRef", "NullTest", "OnConflictClause", "RangeFunction", "RangeSubselect", "RangeVar"}
    | {"ResTarget", "ReturningClause", "RowExpr", "SetToDefault", "SortBy", "SQLValueFunction", "String"}
    | {"SubLink", "TypeCast", "TypeName", "WindowDef", "WithClause"}
)
"""The other nodes a statement may have: expressions, clauses, names and constants."""

FUNCTIONS = frozenset(
    {"abs", "age", "array_agg", "array_length", "avg", "bool_and", "bool_or", "btrim", "ceil", "ceiling"}
    | {"char_length", "character_length", "concat", "concat_ws", "count", "cume_dist", "date_part"}
    | {"date_trunc", "dense_rank", "every", "extract", "first_value", "floor", "generate_series", "initcap"}
    | {"json_agg", "json_build_array", "json_build_object", "jsonb_agg", "jsonb_build_array"}
    | {"jsonb_build_object", "lag", "last_value", "lead", "left", "length", "lower", "lpad", "ltrim"}
    | {"make_date", "make_interval", "make_timestamp", "max", "min", "mod", "now", "nth_value", "ntile"}
    | {"percent_rank", "position", "power", "rank", "regexp_replace", "replace", "right", "round"}
    | {"row_number", "rpad", "rtrim", "sign", "split_part", "sqrt", "starts_with", "string_agg", "strpos"}
    | {"substr", "substring", "sum", "timezone", "to_char", "to_date", "to_json", "to_jsonb", "to_number"}
    | {"to_timestamp", "trunc", "upper"}
)
"""Functions a statement may call (unqualified or in `pg_catalog`): text, numbers, dates, JSON, aggregates."""

CATALOG_SCHEMAS = frozenset({"pg_catalog", "information_schema", "pg_toast"})
CATALOG_VIEWS = frozenset({"pg_tables", "pg_indexes"})
"""The system catalog relations a statement may read (a name starting `pg_` is the catalog's otherwise)."""

ALTER_TABLE_COMMANDS = frozenset(
    {AlterTableType.AT_AddColumn, AlterTableType.AT_DropColumn, AlterTableType.AT_ColumnDefault}
    | {AlterTableType.AT_SetNotNull, AlterTableType.AT_DropNotNull, AlterTableType.AT_AlterColumnType}
    | {AlterTableType.AT_AddConstraint, AlterTableType.AT_DropConstraint}
)
TABLES_AND_INDEXES = frozenset({ObjectType.OBJECT_TABLE, ObjectType.OBJECT_INDEX})
RENAMED = frozenset({ObjectType.OBJECT_TABLE, ObjectType.OBJECT_COLUMN})
INDEX_METHODS = frozenset({"btree", "hash", "gist", "gin", "brin"})


def check_postgres(query: str) -> None:
    """Refuse `query` unless it is one statement of a listed kind made of listed parts.

    Raises:
        BusinessRuleError: what is not allowed, named, with what is.
    """
    try:
        statements = parse_sql(query)
    except ParseError as error:
        msg = f"The database refused the statement: {error}"
        raise BusinessRuleError(msg) from error
    if len(statements) != 1:
        msg = f"The SQL console runs one statement at a time (got {len(statements)})."
        raise BusinessRuleError(msg)
    (raw,) = statements
    kind = type(raw.stmt).__name__
    if kind not in STATEMENTS:
        _refuse(f"{' '.join(query.split()[:2]).upper()}... ({kind})")
    for node in _nodes(raw):
        if (problem := _problem(node)) is not None:
            _refuse(problem)


def _problem(node: ast.Node) -> str | None:
    kind = type(node).__name__
    if kind not in PARTS and kind not in STATEMENTS:
        return f"{kind} in a statement"
    if isinstance(node, ast.FuncCall):
        return _function(node)
    if isinstance(node, ast.RangeVar):
        return _relation(node)
    if isinstance(node, ast.A_Expr) and len(operator := [p.sval for p in node.name or ()]) > 1:
        return None if operator[0] == "pg_catalog" else f"the operator {'.'.join(operator)}"
    return _schema_change(node)


def _schema_change(node: ast.Node) -> str | None:  # noqa: PLR0911  (one answer per kind of statement)
    if isinstance(node, ast.DropStmt) and node.removeType not in TABLES_AND_INDEXES:
        return f"DROP {_named(node.removeType)}"
    if isinstance(node, ast.AlterTableStmt) and node.objtype != ObjectType.OBJECT_TABLE:
        return f"ALTER {_named(node.objtype)}"
    if isinstance(node, ast.AlterTableCmd) and node.subtype not in ALTER_TABLE_COMMANDS:
        return f"ALTER TABLE ... {_named(node.subtype)}"
    if isinstance(node, ast.RenameStmt) and node.renameType not in RENAMED:
        return f"renaming a {_named(node.renameType)}"
    if isinstance(node, ast.CreateStmt) and (node.accessMethod or node.tablespacename):
        return "a table's access method or tablespace"
    if isinstance(node, ast.IndexStmt) and (node.accessMethod not in INDEX_METHODS or node.tableSpace):
        return f"an index of the method {node.accessMethod} or in a tablespace"
    return None


def _function(call: ast.FuncCall) -> str | None:
    *schema, name = (part.sval for part in call.funcname or ())
    if schema in ([], ["pg_catalog"]) and name.lower() in FUNCTIONS:
        return None
    return f"the function {'.'.join([*schema, name])}()"


def _relation(relation: ast.RangeVar) -> str | None:
    name = (relation.relname or "").lower()
    schema = (relation.schemaname or "").lower()
    if relation.catalogname:
        return f"a relation of another database ({relation.catalogname}.{schema}.{name})"
    if name in CATALOG_VIEWS and schema in {"", "pg_catalog"}:
        return None
    if schema in CATALOG_SCHEMAS or name.startswith("pg_"):
        return f"the system catalog relation {'.'.join(filter(None, [schema, name]))}"
    return None


def _nodes(value: object) -> Iterator[ast.Node]:
    """Every node of a parse tree, depth first."""
    if isinstance(value, ast.Node):
        yield value
        for attribute in getattr(type(value), "__slots__", ()):
            yield from _nodes(getattr(value, attribute, None))
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _nodes(item)


def _named(value: object) -> str:
    """An enum member of the parse tree as SQL says it (`ObjectType.OBJECT_FUNCTION`: FUNCTION)."""
    name = str(getattr(value, "name", value))
    return name.removeprefix("OBJECT_").removeprefix("AT_")


def _refuse(what: str) -> None:
    msg = (
        f"The SQL console does not allow {what} on PostgreSQL. It runs one SELECT, INSERT, UPDATE, "
        "DELETE, or CREATE, ALTER, DROP or TRUNCATE of a table or index, with the functions "
        f"{', '.join(sorted(FUNCTIONS))}."
    )
    raise BusinessRuleError(msg)
