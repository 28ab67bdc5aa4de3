from enum import StrEnum


class ScheduleEnum(StrEnum):
    CRON = "cron"
    MONTHLY = "monthly"
    NONE = "none"
    QUARTERLY = "quarterly"
    WEEKLY = "weekly"

    def __str__(self) -> str:
        return str(self.value)
