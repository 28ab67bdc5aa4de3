from enum import StrEnum


class LeaderboardRanksCreateRankStyle(StrEnum):
    COMPETITION = "competition"
    ORDINAL = "ordinal"
    VALUE_0 = ""

    def __str__(self) -> str:
        return str(self.value)
