from enum import StrEnum


class LeaderboardClansRetrieveRankStyle(StrEnum):
    COMPETITION = "competition"
    ORDINAL = "ordinal"
    VALUE_0 = ""

    def __str__(self) -> str:
        return str(self.value)
