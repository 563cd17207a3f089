from ninja import Field, Schema


class TeamOut(Schema):
    id: int
    name: str
    role: str


class MemorySettingsOut(Schema):
    active_team: str | None
    default_visibility: str


class TokenInfoOut(Schema):
    name: str
    fleet: str
    role: str
    scopes: list[str]


class MeOut(Schema):
    username: str
    is_staff: bool
    teams: list[TeamOut]
    settings: MemorySettingsOut
    token: TokenInfoOut | None = None


class MemorySettingsIn(Schema):
    active_team: str | int | None = Field(
        None, description="Team name or id; null for no active team."
    )
    default_visibility: str = Field("private", description="private, team or global")
