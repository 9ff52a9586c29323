"""``toolgold users``: add, list, change and deactivate users from a shell, without the app's picker.

This is how an OIDC deployment gets its first admin (the app shows the exact command on an empty database).
``--user`` says who acts; it is attribution, not authentication: shell access to the server is access to the
database. The store checks the acting user's role and writes every change to the audit log.
"""

from __future__ import annotations

import click

from labeler.cli.options import db_option
from labeler.store import ROLES, Store, StoreError

acting_user = click.option("--user", "actor", envvar="TOOLGOLD_USER", show_envvar=True, default=None,
                           help="Who acts (an admin; not needed for the very first user).")


def _need_admin(actor: str | None, what: str) -> str:
    if not actor:
        raise StoreError(f"{what} needs --user NAME (an admin), or TOOLGOLD_USER")
    return actor


@click.group("users")
def users_cmd() -> None:
    """Who may label, review and administer (the users table is the authority on roles)."""


@users_cmd.command("add")
@click.argument("name")
@click.option("--role", type=click.Choice(ROLES), required=True, help="The new user's role.")
@acting_user
@db_option
def add_cmd(name: str, role: str, actor: str | None, db: str | None) -> None:
    """Add NAME (with OIDC: the verified email, or the subject). On an empty database the first user needs
    no --user; make it an admin."""
    store = Store(db)
    try:
        if store.users(include_inactive=True) and not actor:
            _need_admin(actor, "adding a user")
        user = store.add_user(name, role, actor=actor)
    finally:
        store.close()
    click.echo(f"added {user.name} ({user.role})")


@users_cmd.command("list")
@db_option
def list_cmd(db: str | None) -> None:
    """Every user with role and whether active."""
    store = Store(db)
    try:
        everyone = store.users(include_inactive=True)
    finally:
        store.close()
    if not everyone:
        click.echo("no users yet: toolgold users add NAME --role admin", err=True)
    for u in everyone:
        click.echo(f"{u.name}\t{u.role}\t{'active' if u.active else 'deactivated'}")


@users_cmd.command("set-role")
@click.argument("name")
@click.argument("role", type=click.Choice(ROLES))
@acting_user
@db_option
def set_role_cmd(name: str, role: str, actor: str | None, db: str | None) -> None:
    """Give NAME another role (admins only; there is always at least one active admin)."""
    store = Store(db)
    try:
        user = store.set_user(name, role=role, actor=_need_admin(actor, "changing a role"))
    finally:
        store.close()
    click.echo(f"{user.name} is now {user.role}")


@users_cmd.command("deactivate")
@click.argument("name")
@acting_user
@db_option
def deactivate_cmd(name: str, actor: str | None, db: str | None) -> None:
    """Deactivate NAME: they can no longer sign in or act; their labels stay theirs."""
    store = Store(db)
    try:
        user = store.set_user(name, active=False, actor=_need_admin(actor, "deactivating a user"))
    finally:
        store.close()
    click.echo(f"deactivated {user.name}")


COMMANDS = [users_cmd]
