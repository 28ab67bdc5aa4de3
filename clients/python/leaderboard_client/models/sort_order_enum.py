from enum import StrEnum


class SortOrderEnum(StrEnum):
    HIGHEST_FIRST = "highest_first"
    LOWEST_FIRST = "lowest_first"

    def __str__(self) -> str:
        return str(self.value)
