"""Contains all the data models used in inputs/outputs"""

from .around_out import AroundOut
from .board_out import BoardOut
from .clan_entry_out import ClanEntryOut
from .clan_in_request import ClanInRequest
from .clan_members_out import ClanMembersOut
from .clan_out import ClanOut
from .clan_standing_out import ClanStandingOut
from .clans_top_out import ClansTopOut
from .entry_out import EntryOut
from .error import Error
from .error_detail import ErrorDetail
from .found_player_out import FoundPlayerOut
from .friend_entry_out import FriendEntryOut
from .friends_in_request import FriendsInRequest
from .friends_out import FriendsOut
from .friends_view_out import FriendsViewOut
from .ping import Ping
from .player_in_request import PlayerInRequest
from .player_in_request_segments import PlayerInRequestSegments
from .player_out import PlayerOut
from .player_out_segments import PlayerOutSegments
from .player_rank_out import PlayerRankOut
from .player_search_out import PlayerSearchOut
from .player_season_row_out import PlayerSeasonRowOut
from .player_seasons_out import PlayerSeasonsOut
from .rank_entry_out import RankEntryOut
from .rank_style_enum import RankStyleEnum
from .ranks_in_request import RanksInRequest
from .ranks_out import RanksOut
from .result_in_request import ResultInRequest
from .result_out import ResultOut
from .result_status_enum import ResultStatusEnum
from .reward_out import RewardOut
from .rewards_out import RewardsOut
from .schedule_enum import ScheduleEnum
from .score_operator_enum import ScoreOperatorEnum
from .season_out import SeasonOut
from .season_status_enum import SeasonStatusEnum
from .sort_order_enum import SortOrderEnum
from .top_out import TopOut

__all__ = (
    "AroundOut",
    "BoardOut",
    "ClanEntryOut",
    "ClanInRequest",
    "ClanMembersOut",
    "ClanOut",
    "ClanStandingOut",
    "ClansTopOut",
    "EntryOut",
    "Error",
    "ErrorDetail",
    "FoundPlayerOut",
    "FriendEntryOut",
    "FriendsInRequest",
    "FriendsOut",
    "FriendsViewOut",
    "Ping",
    "PlayerInRequest",
    "PlayerInRequestSegments",
    "PlayerOut",
    "PlayerOutSegments",
    "PlayerRankOut",
    "PlayerSearchOut",
    "PlayerSeasonRowOut",
    "PlayerSeasonsOut",
    "RankEntryOut",
    "RanksInRequest",
    "RanksOut",
    "RankStyleEnum",
    "ResultInRequest",
    "ResultOut",
    "ResultStatusEnum",
    "RewardOut",
    "RewardsOut",
    "ScheduleEnum",
    "ScoreOperatorEnum",
    "SeasonOut",
    "SeasonStatusEnum",
    "SortOrderEnum",
    "TopOut",
)
