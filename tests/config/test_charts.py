"""The shared chart geometry (config/building_blocks/charts.py): round ticks, thinning, and a
line over time from zero, broken where a sample is missing."""

from datetime import UTC, datetime, timedelta

from config.building_blocks.charts import Tick, round_step, round_ticks, thin, time_chart

START = datetime(2026, 7, 1, 11, 0, tzinfo=UTC)


def minutes(*values):
    return [(START + timedelta(minutes=i), value) for i, value in enumerate(values)]


def test_round_steps_and_ticks():
    assert [round_step(span, 3) for span in (0, 0.4, 1, 7, 30, 250)] == [1, 1, 1, 5, 10, 100]
    assert round_ticks(1, 1) == [1]
    assert round_ticks(3, 80) == [3, 50, 80]
    assert round_ticks(1, 2) == [1, 2]


def test_thinning_keeps_the_last_sample():
    assert thin(list(range(10)), 4) == [0, 2, 5, 9]
    assert thin([1, 2], 4) == [1, 2]


def test_a_line_runs_from_zero_to_a_round_ceiling_and_breaks_at_gaps():
    chart = time_chart(
        samples=minutes(2, 4, None, 7, None, 1),
        tick_every=timedelta(minutes=2),
        tick_format="%H:%M",
        width=106,
        height=138,
    )

    # The plot is 6..100 wide and 18..118 high; the ceiling is 10 (ticks 0, 5, 10).
    assert [(p.x, p.y) for p in chart.points] == [(6, 98), (24.8, 78), (62.4, 48), (100, 108)]
    assert chart.lines == ["6,98 24.8,78", "62.4,48 62.4,48", "100,108 100,108"]
    assert chart.y_ticks == [Tick(118, "0"), Tick(68, "5"), Tick(18, "10")]
    assert chart.x_ticks == [Tick(6, "11:00"), Tick(43.6, "11:02"), Tick(81.2, "11:04")]
    assert (chart.latest.value, chart.highest, chart.samples) == (1, 7, 6)


def test_nothing_sampled_is_an_empty_frame():
    chart = time_chart(samples=minutes(None, None), tick_every=timedelta(hours=1), tick_format="%H")

    assert (chart.points, chart.lines, chart.latest, chart.highest) == ([], [], None, None)
    assert chart.y_ticks == [Tick(110, "0"), Tick(18, "1")]
    assert chart.x_ticks == [Tick(6, "11")]
