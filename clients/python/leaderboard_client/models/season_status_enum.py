from enum import StrEnum


class SeasonStatusEnum(StrEnum):
    CLOSED = "closed"
    CLOSING = "closing"
    RUNNING = "running"
    SCHEDULED = "scheduled"

    def __str__(self) -> str:
        return str(self.value)
