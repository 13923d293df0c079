"""Credentials of the environment: which variables count, and masking only when needed."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from toolnexus_ref import secrets


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    secrets.clear()
    yield
    secrets.clear()


def test_credential_looking_values_of_eight_characters_or_more_count() -> None:
    environ = {
        "OPENAI_API_KEY": "sk-abcdefghijkl",
        "GITHUB_TOKEN": "ghp_1234567890",
        "DB_PASSWORD": "correct horse",
        "my_client_secret": "s3cr3t-value",
        "HTTP_AUTHORIZATION": "Bearer xyz12345",
    }
    assert sorted(secrets.credential_values(environ)) == sorted(environ.values())


def test_short_values_locations_and_other_names_do_not() -> None:
    environ = {
        "FEATURE_TOKEN": "1",  # too short to be a credential
        "AUTH_ENABLED": "true",
        "SSH_AUTH_SOCK": "/run/user/1000/keyring/ssh",  # where one lives, not one
        "GOOGLE_APPLICATION_CREDENTIALS_FILE": "/home/me/creds.json",
        "KEYCLOAK_URL": "https://login.example.com",
        "HOME": "/home/somebody-long",
        "PATH": "/usr/local/bin:/usr/bin",
    }
    assert secrets.credential_values(environ) == []


def test_masking_is_off_until_something_is_registered() -> None:
    assert not secrets.registered()
    assert secrets.mask("nothing to hide here") == "nothing to hide here"
    assert secrets.register_environment({"API_KEY": "abcdefgh12", "X": "abcdefgh12"}) == 1
    assert secrets.registered()
    assert secrets.mask("key=abcdefgh12;") == "key=***;"
    assert secrets.find("abcdefgh12")
    assert not secrets.find("abcdefgh1")


def test_a_value_inside_a_longer_one_masks_the_longer_whole() -> None:
    secrets.register("abcd1234")
    secrets.register("abcd1234-and-more")
    assert secrets.mask("x abcd1234-and-more y abcd1234") == "x *** y ***"
