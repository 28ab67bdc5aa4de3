"""The one error the harness raises for a condition it can explain to whoever runs it."""


class BenchError(Exception):
    pass
