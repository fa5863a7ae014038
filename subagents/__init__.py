"""Declarative subagent specs, one module each, each with its own `interrupt_on`."""
