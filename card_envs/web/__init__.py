"""The web app (``card-envs serve``, the ``web`` extra): play, watch and replay in the browser.

``tables`` holds the games and replays (plain Python: what a seat is sent, agents, expiry);
``server`` is the Starlette app over them and ``serve``; ``static/`` the page, served from the
package. Importing ``card_envs`` imports none of it.
"""
