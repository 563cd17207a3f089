"""Writes of the fact store, one module per concern; import from the module itself.

- ``cleaning``: checking a fact's input (``fact_input_clean``)
- ``create``: creating one fact or a batch, with near-duplicate merging and supersession
- ``importing``: importing an exported document, idempotently
- ``update``: changing and deleting one fact
- ``curation``: changing many facts at once, and undoing it
- ``forgetting``: forgetting facts with everything derived from them
- ``extraction``: extracting facts from a conversation, and the review queue
- ``distillation``: summaries and profiles rolled up from a scope's facts
- ``summaries``: summaries and profiles following their sources out of a scope
- ``retention``: the active cap
- ``embedding``: the embedder, embedding after commit, the sweep and the backfill
- ``access``: the access counts recall adds to
- ``config``: Settings -> Memory

Every write keeps the full-text index in step inside its own transaction and queues
embedding after commit, so a fact is kept even when the embedder is down.
"""
