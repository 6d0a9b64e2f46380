# ---
# jupyter:
#   accelerator: GPU
#   colab:
#     name: iGot_worker.ipynb
#     provenance: []
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     name: python3
# ---

# %% [markdown]
# # Work for my team's iGot
# Lend this Colab session's GPU to your team's iGot server: while the cell of step 2 runs, this
# session takes the recordings waiting in the team's queue one at a time, makes each into an
# interview (Whisper large-v3, NVIDIA Sortformer for the speakers, the summary, as a Colab run
# does) and sends it back; the server saves it into the team's library.
#
# **Before you start**, the team's admin lets this session in from the server's terminal:
# `igot workers add colab-NAME --out LIB` prints a **worker token** (once). It is a password:
# keep it under 🔑 **Secrets** in the left bar (name `IGOT_WORKER_TOKEN`, allow this notebook to
# use it) rather than in the form, so the notebook never holds it. It lets this session do one
# thing only: take a job, read that job's recording, say how it goes and send its interview back
# (nothing else of the library). The admin ends it with `igot workers revoke colab-NAME`.
#
# This session only connects out, to the server's **https://** address: a server in an office needs
# an address Colab can reach (see "Workers" in iGot's README). Use a GPU: *Runtime → Change runtime
# type → T4 GPU*. Colab ends idle or long sessions: the job it was making then goes to another worker.

# %% cellView="form"
#@title 1. Install iGot (about a minute) { display-mode: "form" }
#@markdown Adds iGot and the few libraries Colab lacks, changing none of Colab's own: no restart. On a GPU, step 2 adds NVIDIA NeMo the same way (about a minute more).
import importlib.util, subprocess, sys

IGOT_PACKAGE = "igot-interviews[colab] @ git+https://github.com/OWNER/igot@main"  # where this notebook's code is published
if importlib.util.find_spec("igot") is None:
    print("Installing iGot and the libraries Colab lacks (about a minute)…")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", IGOT_PACKAGE], check=True)
import igot, igot.colab

igot.colab.show_errors_briefly()
print("All libraries installed!")

# %% cellView="form"
#@title 2. Work for my team's iGot (runs until you stop it) { display-mode: "form" }
#@markdown The team server's address, as the admin gave it (https://…):
server_address = ""  #@param {type:"string"}
#@markdown The worker token: **secret**. Leave it empty to use the 🔑 secret `IGOT_WORKER_TOKEN` (better: a notebook saved or shared with a token in it gives it away).
worker_token = ""  #@param {type:"string"}
#@markdown Stop with ■ (interrupt the cell). The summary's Gemma 3 model is gated: add your Hugging Face token as the 🔑 secret `HF_TOKEN` (name and value from huggingface.co/settings/tokens).
igot.colab.hf_token()
igot.colab.work_for_team(server_address, worker_token)
