"""The catalog itself: codes, slugs, categories and explanations that users and reports rely on."""

from __future__ import annotations

import re

from toolnexus_conformance._model import Category, Scope
from toolnexus_conformance._registry import CHECK_MODULES, load_catalog

CODE = re.compile(r"TN\d{3}")
SLUG = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
#: Code ranges of the static families (this file's owner); others use TN0xx, TN15x, TN5xx-TN9xx.
STATIC_FAMILIES = {
    "TN1": Category.NAMING,
    "TN2": Category.DESCRIPTION,
    "TN3": Category.SCHEMA,
    "TN4": Category.PROVIDER,
}


def test_the_provider_module_path_is_a_check_module() -> None:
    assert "toolnexus_conformance.checks.providers" in CHECK_MODULES
    import toolnexus_conformance.checks.providers  # noqa: F401  (registers on import)

    assert "TN431" in load_catalog()


def test_codes_and_slugs_are_well_formed_and_unique() -> None:
    infos = load_catalog().infos()
    assert len({i.code for i in infos}) == len(infos)
    assert len({i.slug for i in infos}) == len(infos)
    for info in infos:
        assert CODE.fullmatch(info.code), info.code
        assert SLUG.fullmatch(info.slug), info.slug
        assert info.category in Category


def test_every_entry_explains_itself() -> None:
    for info in load_catalog().infos():
        assert len(info.title) > 10, info.code
        assert len(info.why) > 40, info.code
        assert len(info.fix) > 20, info.code
        assert info.why.strip() == info.why
        assert info.fix.strip() == info.fix


def test_static_families_have_their_category() -> None:
    mine = [
        i
        for i in load_catalog().infos()
        if i.code[:3] in STATIC_FAMILIES and not i.code.startswith("TN15")
    ]
    assert len(mine) >= 28
    for info in mine:
        assert info.category is STATIC_FAMILIES[info.code[:3]], info.code
        assert not info.live, info.code
    assert {i.code for i in mine if i.scope is Scope.TARGET} == {"TN403"}


def test_every_provider_rule_cites_its_source() -> None:
    for info in load_catalog().infos():
        if info.category is Category.PROVIDER:
            assert info.reference, info.code
            assert "http" in info.reference or ".py" in info.reference, info.code
