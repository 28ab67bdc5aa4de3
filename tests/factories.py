"""factory_boy factories for the game's records."""

from datetime import timedelta

import factory
from django.utils import timezone

from matches.models import MatchResult, Player, PlayerTotal
from seasons.models import Board, RewardTier, Season
from webhooks.models import WebhookEndpoint


class BoardFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Board
        django_get_or_create = ("slug",)

    slug = factory.Sequence(lambda n: f"board-{n}")
    name = factory.LazyAttribute(lambda o: o.slug.title())


class SeasonFactory(factory.django.DjangoModelFactory):
    """A season running now: it started a day ago and ends in 29 days."""

    class Meta:
        model = Season

    board = factory.SubFactory(BoardFactory)
    slug = factory.Sequence(lambda n: f"s{n}")
    name = factory.LazyAttribute(lambda o: f"Season {o.slug}")
    starts_at = factory.LazyFunction(
        lambda: timezone.now().replace(microsecond=0) - timedelta(days=1)
    )
    ends_at = factory.LazyAttribute(lambda o: o.starts_at + timedelta(days=30))
    grace_period = timedelta(hours=1)


class PlayerFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Player

    player_id = factory.Sequence(lambda n: f"player{n}")
    display_name = factory.Faker("user_name")


class MatchResultFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = MatchResult

    season = factory.SubFactory(SeasonFactory)
    board = factory.SelfAttribute("season.board")
    player = factory.SubFactory(PlayerFactory)
    match_id = factory.Sequence(lambda n: f"m{n}")
    points = 10
    ended_at = factory.LazyFunction(timezone.now)
    received_at = factory.LazyFunction(timezone.now)


class PlayerTotalFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = PlayerTotal

    season = factory.SubFactory(SeasonFactory)
    player = factory.SubFactory(PlayerFactory)
    points = 10
    reached_at = factory.LazyFunction(timezone.now)
    updated_at = factory.LazyFunction(timezone.now)


class WebhookEndpointFactory(factory.django.DjangoModelFactory):
    """An endpoint for every event type and board (tests allow private URLs: 127.0.0.1)."""

    class Meta:
        model = WebhookEndpoint
        skip_postgeneration_save = True

    url = factory.Sequence(lambda n: f"http://127.0.0.1:9/hooks/{n}")
    secret = factory.Sequence(lambda n: f"secret-{n}")

    @factory.post_generation
    def boards(self, create: bool, extracted: list | None, **kwargs: object) -> None:
        if create and extracted:
            self.boards.set(extracted)


def rewarded_board(slug: str) -> Board:
    """A board with the close tests' reward tiers: gold for rank 1, silver for ranks 2-3 and
    top-half for the rest of the top half."""
    board = BoardFactory(slug=slug)
    RewardTier.objects.create(board=board, rank_from=1, rank_to=1, reward_code="gold")
    RewardTier.objects.create(board=board, rank_from=2, rank_to=3, reward_code="silver")
    RewardTier.objects.create(board=board, top_percent=50, reward_code="top-half")
    return board
