"""THE agent loop every feature runs on: the nested pair (``loop``), one response's calls
(``batch``), one result per call (``ledger``), limits, lanes (``inbox``), input awaiting delivery
(``intake``), the process-wide pause gate, the soft requirement, events, and the model and tool
protocols. Imports anyio, pydantic and the leaf packages only: no UI, provider or concrete tool."""
