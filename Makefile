# One command to set up and start the app (`make app`), one to set up and run the tests (`make test`).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PORT ?= 8501
# loopback by default: the app shows conversation text; to share it on a network set ADDRESS=0.0.0.0 and a
# sign-in mode (GRAVITY_AUTH=oidc|password|none, see docs/sharing.md)
ADDRESS ?= 127.0.0.1

.PHONY: setup app test test-fast browser local-llm samples clean-venv FORCE

$(VENV)/.installed: requirements.txt requirements-hosts.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

# The package itself with its app and host extras, the pins as constraints: nothing pinned moves (torch stays the
# CPU build) and the host libraries get requirements-hosts.txt's versions. Its own stamp: pyproject.toml's entry
# points register the hosts, so an edit there reinstalls it (in seconds) without redoing the pins or llama.cpp.
$(VENV)/.package: $(VENV)/.installed pyproject.toml
	$(PY) -m pip install --quiet --no-build-isolation -e ".[app,hosts]" -c requirements.txt -c requirements-hosts.txt
	touch $@

setup: $(VENV)/.package

# The local-model path: llama-cpp-python and SmolLM2-135M for the local_llm tests. Not part of `make app`,
# whose setup stays quick. llama.cpp is compiled for any x86-64 CPU with AVX2, never for the building one:
# a native build on a CPU with AMX segfaults at its first decode (ggml_backend_amx_mul_mat), and a wheel built
# natively on one machine would travel to the next through pip's cache, whose key ignores CMAKE_ARGS; so the
# build never reads or writes that cache. The flags are kept beside the stamp: changing them rebuilds.
# docs/local_models.md, "A portable llama.cpp". LLAVA_BUILD=OFF leaves out the multimodal library (51 of 178
# objects, about a third of CI's build; the text-only server never loads it).
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
	-DGGML_AVX_VNNI=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF \
	-DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DLLAVA_BUILD=OFF
LLAMA_BUILD_LOG := $(VENV)/local-llm-build.log

$(VENV)/.local-llm-flags: FORCE | $(VENV)/.installed
	@echo '$(LLAMA_CMAKE_ARGS)' | cmp -s - $@ || echo '$(LLAMA_CMAKE_ARGS)' > $@

# The venv only has to exist (order-only): a change to requirements.txt must not cost a 5-20 min llama.cpp rebuild.
$(VENV)/.local-llm: requirements-local.txt $(VENV)/.local-llm-flags | $(VENV)/.installed
	$(PY) -m pip uninstall --quiet --yes llama-cpp-python 2>/dev/null || true
	@echo 'CMAKE_ARGS=$(LLAMA_CMAKE_ARGS)' | tee $(LLAMA_BUILD_LOG)
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) $(PY) -m pip install --no-cache-dir \
		--verbose -r requirements-local.txt -c requirements.txt >> $(LLAMA_BUILD_LOG) 2>&1 \
		|| { tail -n 40 $(LLAMA_BUILD_LOG); echo "llama-cpp-python failed to build: $(LLAMA_BUILD_LOG)"; exit 1; }
	@# says what it built for (the configure lines, AVX-512/AMX instructions found) and fails on a non-portable build
	$(PY) -m gravity_engine.llm.build_info --log $(LLAMA_BUILD_LOG) > $(LLAMA_BUILD_LOG).report; status=$$?; \
		tee -a $(LLAMA_BUILD_LOG) < $(LLAMA_BUILD_LOG).report; rm -f $(LLAMA_BUILD_LOG).report; exit $$status
	cp $(VENV)/.local-llm-flags $@

local-llm: $(VENV)/.local-llm

# Debian's Chromium for the real-browser tests (Playwright drives it; it never downloads a browser).
browser:
	@command -v chromium >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq chromium chromium-driver >/dev/null; }

app: setup
	@# a shared address needs a sign-in mode (GRAVITY_AUTH, docs/sharing.md): say why and never start without one
	$(PY) -m app_services.auth $(ADDRESS)
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(PY) -m streamlit run app.py --server.address $(ADDRESS) --server.port $(PORT) --server.headless true --browser.gatherUsageStats false

# Three processes, each taking whole files (their module fixtures, servers and stores are set up once): on a 2-core
# machine 9.0 min, against 12.6 with two and about 20 with one: most of a test's time is waiting on a browser, a
# server or a build in a subprocess.
test: setup browser local-llm
	$(PY) -m pytest -q -n 3 --dist loadfile

test-fast: setup
	$(PY) -m pytest -q -n 3 --dist loadfile -m "not e2e"

# Rebuild the prebuilt sample store after a change to the extractor or the sample conversation.
samples: setup
	rm -rf sample_data/stores/medllm_project
	$(PY) -m gravity_engine build sample_data/medllm_project.jsonl --out sample_data/stores/medllm_project

FORCE:

clean-venv:
	rm -rf $(VENV)
