"""Services of the Streamlit app that the library has no business knowing: who is signed in (``auth``), which
folder is theirs (``workspace``), the accounts' command line (``users``), and the sign-in page and banner that
``app.py`` draws before any page (``signin``, the only module here that imports Streamlit)."""
