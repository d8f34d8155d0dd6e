"""Errors every layer may raise, kept at the bottom so that raising one imports nothing above it."""


class ConfigurationError(ValueError):
    """The configuration cannot work; the message says what to change."""
