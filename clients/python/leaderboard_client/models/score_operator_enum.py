from enum import StrEnum


class ScoreOperatorEnum(StrEnum):
    BEST = "best"
    SUM = "sum"

    def __str__(self) -> str:
        return str(self.value)
