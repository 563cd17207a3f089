"""The engine every app stands on: storage engines, search, embeddings, the chat-model
client, jobs, the queue, the instance settings and the small shared helpers.

It imports no app (``facts``, ``wiki``, ``codegraph``, ``concepts``) and nothing above
them; what it needs to know of the apps they declare (their indexes in ``search.py``,
their tools in ``tools.py``) or register when they load.
"""
