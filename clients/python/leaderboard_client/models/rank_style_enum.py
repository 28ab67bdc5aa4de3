from enum import StrEnum


class RankStyleEnum(StrEnum):
    COMPETITION = "competition"
    ORDINAL = "ordinal"

    def __str__(self) -> str:
        return str(self.value)
