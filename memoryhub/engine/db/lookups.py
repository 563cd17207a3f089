"""``field__any_of=[...]``: the ``in`` lookup, bound as one array on PostgreSQL.

``pk__in=ids`` writes a placeholder per value. psycopg caches how it splits a statement
into placeholders only for statements of up to 50 of them, so a list of a hundred ids
is parsed afresh on every call, in Python: recall reads its ~80 candidates' rows in
2.8 ms that way, 1.1 ms as ``= ANY(%s)`` with one array. SQLite has no arrays and keeps
the placeholders (it parses them in C).
"""

from django.core.exceptions import EmptyResultSet
from django.db import models
from django.db.models.lookups import In


@models.IntegerField.register_lookup
class AnyOf(In):
    lookup_name = "any_of"

    def as_postgresql(self, compiler, connection):
        if not self.rhs_is_direct_value():
            return super().as_sql(compiler, connection)
        values = list(dict.fromkeys(value for value in self.rhs if value is not None))
        if not values:
            raise EmptyResultSet
        lhs, lhs_params = self.process_lhs(compiler, connection)
        return f"{lhs} = ANY(%s)", (*lhs_params, values)
