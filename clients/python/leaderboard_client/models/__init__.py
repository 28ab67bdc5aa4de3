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
from .error_error import ErrorError
from .found_player_out import FoundPlayerOut
from .friend_entry_out import FriendEntryOut
from .friends_in_request import FriendsInRequest
from .friends_out import FriendsOut
from .friends_view_out import FriendsViewOut
from .leaderboard_clans_retrieve_rank_style import LeaderboardClansRetrieveRankStyle
from .leaderboard_clans_top_retrieve_rank_style import LeaderboardClansTopRetrieveRankStyle
from .leaderboard_players_around_retrieve_rank_style import LeaderboardPlayersAroundRetrieveRankStyle
from .leaderboard_players_friends_retrieve_rank_style import LeaderboardPlayersFriendsRetrieveRankStyle
from .leaderboard_players_retrieve_rank_style import LeaderboardPlayersRetrieveRankStyle
from .leaderboard_ranks_create_rank_style import LeaderboardRanksCreateRankStyle
from .leaderboard_top_retrieve_rank_style import LeaderboardTopRetrieveRankStyle
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
from .ranks_in_request import RanksInRequest
from .ranks_out import RanksOut
from .result_in_request import ResultInRequest
from .result_out import ResultOut
from .result_status_enum import ResultStatusEnum
from .reward_out import RewardOut
from .rewards_out import RewardsOut
from .season_out import SeasonOut
from .season_status_enum import SeasonStatusEnum
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
    "ErrorError",
    "FoundPlayerOut",
    "FriendEntryOut",
    "FriendsInRequest",
    "FriendsOut",
    "FriendsViewOut",
    "LeaderboardClansRetrieveRankStyle",
    "LeaderboardClansTopRetrieveRankStyle",
    "LeaderboardPlayersAroundRetrieveRankStyle",
    "LeaderboardPlayersFriendsRetrieveRankStyle",
    "LeaderboardPlayersRetrieveRankStyle",
    "LeaderboardRanksCreateRankStyle",
    "LeaderboardTopRetrieveRankStyle",
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
    "ResultInRequest",
    "ResultOut",
    "ResultStatusEnum",
    "RewardOut",
    "RewardsOut",
    "SeasonOut",
    "SeasonStatusEnum",
    "TopOut",
)
