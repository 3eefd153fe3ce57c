"""The JSON a browser gets of a position: ``views.seatview`` (there since a bot served over HTTP
is sent the same view, ``players.remote``); re-exported here for the web app's modules."""

from island_fortress_env.views.seatview import card_json, choice_json, positions, seat_view, view_json

__all__ = ["card_json", "choice_json", "positions", "seat_view", "view_json"]
