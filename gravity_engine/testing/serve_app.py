"""``streamlit run`` with the test suite's fakes registered, as ``AppServer`` starts the app for browser tests and
benchmarks: a store a test wrote records the model name "fake-embedder", and the app's process must know it.

    python -m gravity_engine.testing.serve_app run app.py --server.headless true ...
"""

import sys

from streamlit.web import cli

import gravity_engine.testing  # noqa: F401  registers the fake embedder with embed.embedder_for

if __name__ == "__main__":
    sys.argv = ["streamlit", *sys.argv[1:]]
    sys.exit(cli.main())
