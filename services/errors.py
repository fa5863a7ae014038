"""The one error type services raise for a request the business refuses."""


class BusinessRuleError(ValueError):
    """A request the business system refuses, with a message for the person or model."""
