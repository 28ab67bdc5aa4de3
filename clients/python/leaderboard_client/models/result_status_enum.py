from enum import StrEnum


class ResultStatusEnum(StrEnum):
    ACCEPTED = "accepted"
    DUPLICATE = "duplicate"

    def __str__(self) -> str:
        return str(self.value)
