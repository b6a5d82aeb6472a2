"""The domain policy in `<environment_context>` and in the permissions fragment."""

from __future__ import annotations

from pathlib import Path

from corral.agents._environment import EnvironmentContext
from corral.agents._permissions_fragment import render_permissions
from corral.tools import PermissionProfile, SandboxMode


def context(
    *,
    network: bool,
    allowed_domains: tuple[str, ...] | None = None,
    denied_domains: tuple[str, ...] = (),
) -> EnvironmentContext:
    return EnvironmentContext(
        cwd=Path("/w"),
        shell="bash",
        current_date="2026-12-01",
        timezone="Etc/UTC",
        network=network,
        allowed_domains=allowed_domains,
        denied_domains=denied_domains,
    )


def test_a_restricted_network_lists_allowed_and_denied_domains_in_codex_layout() -> None:
    text = context(
        network=True, allowed_domains=("**.pypi.org", "files.test"), denied_domains=("x.pypi.org",)
    ).render()
    assert (
        '  <network enabled="true">\n'
        "    <allowed>**.pypi.org</allowed>\n"
        "    <allowed>files.test</allowed>\n"
        "    <denied>x.pypi.org</denied>\n"
        "  </network>\n"
    ) in text


def test_an_unrestricted_network_keeps_the_one_line_form() -> None:
    assert '  <network enabled="true"/>\n' in context(network=True).render()
    assert '  <network enabled="false"/>\n' in context(network=False).render()


def test_a_changed_domain_list_is_sent_again_in_the_diff() -> None:
    before = context(network=True, allowed_domains=("a.test",))
    after = context(network=True, allowed_domains=("b.test",))
    diff = after.render_diff(before)
    assert diff is not None and "<allowed>b.test</allowed>" in diff
    assert before.render_diff(before) is None


def test_the_permissions_fragment_explains_the_proxy_and_names_the_hosts() -> None:
    profile = PermissionProfile(
        sandbox=SandboxMode.READ_ONLY,
        network=True,
        allowed_domains=("pypi.org",),
        denied_domains=("evil.pypi.org",),
    )
    text = render_permissions(profile)
    assert "commands may reach `pypi.org`, except `evil.pypi.org`" in text
    assert "HTTPS_PROXY" in text
    assert "proxy" not in render_permissions(PermissionProfile(network=True))
