"""The console's door: repeated failed logins lock out the address they come from, never the
username everywhere (django-axes), an operator sees and lifts lockouts, and game servers' keys
are untouched."""

import pytest
from axes.models import AccessAttempt
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

pytestmark = pytest.mark.django_db

LOGIN = "/admin/login/?next=/admin/"


@pytest.fixture
def operator(db):
    return User.objects.create_superuser("operator", "op@example.com", "right-password")


def log_in(username: str, password: str, address: str = "203.0.113.7") -> tuple[int, bool]:
    """One login attempt from its own browser: the status, and whether it got a session."""
    browser = Client(REMOTE_ADDR=address)
    answer = browser.post(LOGIN, {"username": username, "password": password})
    return answer.status_code, "_auth_user_id" in browser.session


def test_five_wrong_passwords_lock_the_user_out_even_with_the_right_one(operator):
    wrong = [log_in("operator", f"guess-{n}") for n in range(5)]

    locked = log_in("operator", "right-password")

    assert wrong == [(200, False)] * 4 + [(429, False)]
    assert locked == (429, False)
    assert AccessAttempt.objects.get(username="operator").failures_since_start == 6


def test_one_address_trying_many_usernames_is_locked_out(operator):
    for n in range(5):
        log_in(f"user-{n}", "guess", address="198.51.100.4")

    from_there = log_in("operator", "right-password", address="198.51.100.4")
    from_elsewhere = log_in("operator", "right-password", address="192.0.2.1")

    assert from_there == (429, False)
    assert from_elsewhere == (302, True)


def test_failures_from_one_address_do_not_lock_the_user_out_elsewhere(operator):
    # given: someone guesses the operator's password from one address until it is locked out
    guesses = [log_in("operator", f"guess-{n}", address="198.51.100.4") for n in range(6)]

    # when: the operator logs in from their own address
    from_elsewhere = log_in("operator", "right-password", address="192.0.2.1")

    # then: only the guessing address is locked out
    assert guesses == [(200, False)] * 4 + [(429, False)] * 2
    assert from_elsewhere == (302, True)
    assert log_in("operator", "right-password", address="198.51.100.4") == (429, False)


def test_many_addresses_guessing_a_little_each_lock_nobody_out(operator):
    for n in range(12):
        log_in("operator", "guess", address=f"192.0.2.{n + 10}")

    assert log_in("operator", "right-password", address="192.0.2.99") == (302, True)


def test_resetting_the_username_lifts_its_lockout(operator):
    for n in range(5):
        log_in("operator", f"guess-{n}")

    call_command("axes_reset_username", "operator")

    assert log_in("operator", "right-password") == (302, True)
    assert not AccessAttempt.objects.filter(username="operator").exists()


def test_a_success_before_the_limit_clears_the_failures(operator):
    for n in range(4):
        log_in("operator", f"guess-{n}")

    assert log_in("operator", "right-password") == (302, True)
    assert [log_in("operator", "guess-again") for _ in range(4)] == [(200, False)] * 4


def test_operators_see_the_lockouts_in_the_admin(operator, client):
    for n in range(5):
        log_in("intruder", f"guess-{n}", address="198.51.100.9")
    client.force_login(operator)

    page = client.get("/admin/axes/accessattempt/?locked_out=yes")

    assert page.status_code == 200
    assert [(a.username, a.ip_address) for a in page.context["cl"].result_list] == [
        ("intruder", "198.51.100.9")
    ]


def test_a_locked_out_address_still_posts_results_with_its_key(api_key, season):
    for n in range(5):
        log_in(f"user-{n}", "guess", address="127.0.0.1")
    game_server = Client(REMOTE_ADDR="127.0.0.1", HTTP_AUTHORIZATION=f"Api-Key {api_key}")

    posted = game_server.post(
        "/api/v1/scores",
        {"player_id": "p1", "points": 10, "match_id": "m1"},
        content_type="application/json",
    )

    assert posted.status_code == 201
