"""Users and roles, the tag vocabulary, and the audit log as read.

On an empty database the first user may add themselves (the app makes them admin); after that only an
admin adds or changes users and edits the tag vocabulary. Every change is an audit event.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection, delete, func, insert, select, text, update

from labeler.store import tables as t
from labeler.store.common import PermissionDenied, audit, check_role, require_admin
from labeler.store.engine import Database, StoreError, now_iso


@dataclass(frozen=True)
class User:
    name: str
    role: str
    active: bool = True


@dataclass(frozen=True)
class Tag:
    tag: str
    adversarial: bool
    description: str = ""


def _lock_users(conn: Connection) -> None:
    """Serialize every change of who is a user and with which role, for the rest of the transaction.

    SQLite's BEGIN IMMEDIATE already lets one writer in at a time. On PostgreSQL two transactions would each
    see the table as it was (no users yet; both admins still admins) and both commit: this lock mode
    conflicts with itself, so the second waits, then its statements read what the first committed."""
    if conn.dialect.name == "postgresql":
        conn.execute(text("LOCK TABLE users IN SHARE ROW EXCLUSIVE MODE"))


def _same_name(conn: Connection, name: str) -> str | None:
    """An existing user whose name is ``name`` ignoring case (an identity is compared case-insensitively)."""
    found = conn.scalar(select(t.UserRow.name).where(func.lower(t.UserRow.name) == name.lower()))
    return None if found is None else str(found)


def add_user(db: Database, name: str, role: str = "annotator", *, actor: str | None = None) -> User:
    """Add a user. The first user may add themselves; after that only an admin adds users."""
    name = name.strip()
    if not name:
        raise StoreError("a user needs a name")
    check_role(role)
    with db.write() as conn:
        _lock_users(conn)
        if conn.scalar(select(func.count()).select_from(t.UserRow)):
            require_admin(conn, actor, "add users")
        if (existing := _same_name(conn, name)) is not None:
            raise StoreError(f"there is already a user named {existing!r}")
        conn.execute(insert(t.UserRow).values(name=name, role=role, active=True, created_at=now_iso()))
        audit(conn, actor=actor or name, action="user.add", entity="user", entity_id=name,
              after={"role": role, "active": True})
    return User(name, role)


def set_user(db: Database, name: str, *, role: str | None = None, active: bool | None = None, actor: str) -> User:
    """Change a user's role or active flag (admins only; an admin cannot demote or disable themselves, and
    there is always at least one active admin, checked with the users table locked)."""
    if role is not None:
        check_role(role)
    with db.write() as conn:
        _lock_users(conn)
        require_admin(conn, actor, "change users")
        row = conn.execute(select(t.UserRow).where(t.UserRow.name == name)).first()
        if row is None:
            raise StoreError(f"no user named {name!r}")
        if name == actor and (role not in (None, "admin") or active is False):
            raise PermissionDenied("an admin cannot demote or disable themselves (ask another admin)")
        new_role, new_active = role or row.role, row.active if active is None else active
        after = {"role": new_role, "active": new_active}
        if row.role == "admin" and row.active and not (new_role == "admin" and new_active):
            others = conn.scalar(select(func.count()).select_from(t.UserRow).where(
                t.UserRow.role == "admin", t.UserRow.active == True, t.UserRow.name != name))  # noqa: E712
            if not others:
                raise PermissionDenied(f"{name!r} is the last active admin: make someone else admin first")
        conn.execute(update(t.UserRow).where(t.UserRow.name == name).values(**after))
        audit(conn, actor=actor, action="user.change", entity="user", entity_id=name,
              before={"role": row.role, "active": row.active}, after=after)
    return User(name, new_role, new_active)


def users(db: Database, *, include_inactive: bool = False) -> list[User]:
    q = select(t.UserRow.name, t.UserRow.role, t.UserRow.active).order_by(t.UserRow.name)
    if not include_inactive:
        q = q.where(t.UserRow.active == True)  # noqa: E712 (SQL expression)
    with db.read() as conn:
        return [User(*row) for row in conn.execute(q)]


def get_user(db: Database, name: str) -> User | None:
    with db.read() as conn:
        row = conn.execute(select(t.UserRow.name, t.UserRow.role, t.UserRow.active)
                           .where(t.UserRow.name == name)).first()
    return User(*row) if row else None


def tags(db: Database) -> list[Tag]:
    with db.read() as conn:
        return [Tag(*r) for r in conn.execute(
            select(t.TagRow.tag, t.TagRow.adversarial, t.TagRow.description).order_by(t.TagRow.tag))]


def set_tag(db: Database, tag: str, *, adversarial: bool, description: str = "", actor: str) -> Tag:
    """Add a tag to the vocabulary or change it (admins only)."""
    tag = tag.strip()
    if not tag or any(c.isspace() for c in tag):
        raise StoreError("a tag is one word (use snake_case)")
    with db.write() as conn:
        require_admin(conn, actor, "edit the tag vocabulary")
        before = conn.execute(select(t.TagRow.adversarial, t.TagRow.description)
                              .where(t.TagRow.tag == tag)).first()
        conn.execute(delete(t.TagRow).where(t.TagRow.tag == tag))
        conn.execute(insert(t.TagRow).values(tag=tag, adversarial=adversarial, description=description))
        audit(conn, actor=actor, action="tag.set", entity="tag", entity_id=tag,
              before=dict(before._mapping) if before else None,
              after={"adversarial": adversarial, "description": description})
    return Tag(tag, adversarial, description)


def remove_tag(db: Database, tag: str, *, actor: str) -> None:
    with db.write() as conn:
        require_admin(conn, actor, "edit the tag vocabulary")
        conn.execute(delete(t.TagRow).where(t.TagRow.tag == tag))
        audit(conn, actor=actor, action="tag.remove", entity="tag", entity_id=tag)


# -- import -----------------------------------------------------------------------------------


__all__ = ["Tag", "User", "add_user", "get_user", "remove_tag", "set_tag", "set_user", "tags",
           "users"]
