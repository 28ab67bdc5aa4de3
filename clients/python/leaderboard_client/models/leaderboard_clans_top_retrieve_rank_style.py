from enum import StrEnum


class LeaderboardClansTopRetrieveRankStyle(StrEnum):
    COMPETITION = "competition"
    ORDINAL = "ordinal"
    VALUE_0 = ""

    def __str__(self) -> str:
        return str(self.value)
