"""Tiny randomly initialised models saved exactly as a download leaves them on disk (no model
hub here): their output is noise, the loading and inference code they go through is real."""

from __future__ import annotations

import json
from pathlib import Path

from igot.media.audio import SAMPLE_RATE

LETTERS = "abcdefghijklmnopqrstuvwxyz"
# a character vocabulary like facebook/wav2vec2-base-960h's: <pad> is the CTC blank, '|' the word delimiter
WAV2VEC2_VOCAB = {"<pad>": 0, "<s>": 1, "</s>": 2, "<unk>": 3, "|": 4, "'": 5, **{c: 6 + i for i, c in enumerate(LETTERS)}}
# kredor/punctuate-all's config.json
PUNCTUATION_LABELS = {0: "0", 1: ".", 2: ",", 3: "?", 4: "-", 5: ":"}
SENTENCES = [
    "olá tudo bem com você", "eu acho que o aplicativo é bom mas o cadastro demorou",
    "foi tranquilo o cadastro levou uns dois minutos", "você usaria isso de novo",
    "how was your first day with the app", "the sign up took about two minutes",
]


def save_tiny_wav2vec2(folder: Path, vocab: dict[str, int] = WAV2VEC2_VOCAB) -> Path:
    """A 1-layer Wav2Vec2ForCTC with its processor, as save_pretrained writes them."""
    import torch
    from transformers import (
        Wav2Vec2Config,
        Wav2Vec2CTCTokenizer,
        Wav2Vec2FeatureExtractor,
        Wav2Vec2ForCTC,
        Wav2Vec2Processor,
    )

    folder.mkdir(parents=True, exist_ok=True)
    vocab_file = folder.parent / f"{folder.name}-vocab.json"
    vocab_file.write_text(json.dumps(vocab))
    tokenizer = Wav2Vec2CTCTokenizer(str(vocab_file), unk_token="<unk>", pad_token="<pad>", word_delimiter_token="|")
    extractor = Wav2Vec2FeatureExtractor(feature_size=1, sampling_rate=SAMPLE_RATE, padding_value=0.0, do_normalize=True)
    Wav2Vec2Processor(feature_extractor=extractor, tokenizer=tokenizer).save_pretrained(folder)
    config = Wav2Vec2Config(
        vocab_size=len(vocab), pad_token_id=vocab["<pad>"], hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=64, conv_dim=(16,) * 7, num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4,
    )
    torch.manual_seed(0)
    Wav2Vec2ForCTC(config).save_pretrained(folder)
    return folder


def xlmr_like_tokenizer(texts: list[str], vocab_size: int):
    """A Unigram word-piece tokenizer like XLM-R's (its special tokens and ids), trained on `texts`."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(models.Unigram())
    backend.normalizer = normalizers.NFKC()
    backend.pre_tokenizer = pre_tokenizers.Metaspace()
    backend.decoder = decoders.Metaspace()
    specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    trainer = trainers.UnigramTrainer(vocab_size=vocab_size, special_tokens=specials, unk_token="<unk>", show_progress=False)
    backend.train_from_iterator(list(texts) * 3, trainer)
    backend.post_processor = processors.TemplateProcessing(single="<s> $A </s>",
                                                           special_tokens=[("<s>", 0), ("</s>", 2)])
    return PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<s>", eos_token="</s>", unk_token="<unk>",
                                   pad_token="<pad>", cls_token="<s>", sep_token="</s>", mask_token="<mask>")


def save_tiny_punctuator(folder: Path) -> Path:
    """A tiny XLM-RoBERTa token classifier with punctuate-all's labels, and a Unigram tokenizer
    like XLM-R's, trained here on a few sentences."""
    import torch
    from transformers import XLMRobertaConfig, XLMRobertaForTokenClassification

    tokenizer = xlmr_like_tokenizer(SENTENCES, 150)
    torch.manual_seed(0)
    labels = PUNCTUATION_LABELS
    config = XLMRobertaConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                              intermediate_size=64, max_position_embeddings=514, pad_token_id=1, bos_token_id=0,
                              eos_token_id=2, id2label=labels, label2id={v: k for k, v in labels.items()})
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(folder)
    XLMRobertaForTokenClassification(config).save_pretrained(folder)
    return folder


def sortformer_config(tiny: bool = True) -> dict:
    """The `model` section of diar_streaming_sortformer_4spk-v2's published yaml (no training
    data, optimiser or trainer); tiny: the same layout at toy size (1-layer Conformer of width
    32, 1-layer Transformer of width 16), for tests."""
    from igot.speakers.sortformer import MAX_SPEAKERS

    fc, tf = (32, 16) if tiny else (512, 192)
    return {
        "sample_rate": 16000, "pil_weight": 0.5, "ats_weight": 0.5, "max_num_of_spks": MAX_SPEAKERS,
        "streaming_mode": True,
        "model_defaults": {"fc_d_model": fc, "tf_d_model": tf},
        "preprocessor": {
            "_target_": "nemo.collections.asr.modules.AudioToMelSpectrogramPreprocessor", "normalize": "per_feature",
            "window_size": 0.025, "sample_rate": 16000, "window_stride": 0.01, "window": "hann", "features": 128,
            "n_fft": 512, "frame_splicing": 1, "dither": 0.00001,
        },
        "sortformer_modules": {
            "_target_": "nemo.collections.asr.modules.sortformer_modules.SortformerModules",
            "num_spks": MAX_SPEAKERS, "dropout_rate": 0.5, "fc_d_model": fc, "tf_d_model": tf,
            "spkcache_len": 188, "fifo_len": 0, "chunk_len": 188, "spkcache_update_period": 1,
            "chunk_left_context": 1, "chunk_right_context": 1, "spkcache_sil_frames_per_spk": 3, "scores_add_rnd": 0,
            "pred_score_threshold": 0.25, "max_index": 99999, "scores_boost_latest": 0.05, "sil_threshold": 0.2,
            "strong_boost_rate": 0.75, "weak_boost_rate": 1.5, "min_pos_scores_rate": 0.5,
            "causal_attn_rate": 0.5, "causal_attn_rc": 7,
        },
        "encoder": {
            "_target_": "nemo.collections.asr.modules.ConformerEncoder", "feat_in": 128, "feat_out": -1,
            "n_layers": 1 if tiny else 17, "d_model": fc, "subsampling": "dw_striding", "subsampling_factor": 8,
            "subsampling_conv_channels": 16 if tiny else 256, "causal_downsampling": False, "ff_expansion_factor": 4,
            "self_attention_model": "rel_pos", "n_heads": 2 if tiny else 8, "att_context_size": [-1, -1],
            "att_context_style": "regular", "xscaling": True, "untie_biases": True, "pos_emb_max_len": 5000,
            "conv_kernel_size": 9, "conv_norm_type": "batch_norm", "conv_context_size": None, "dropout": 0.1,
            "dropout_pre_encoder": 0.1, "dropout_emb": 0.0, "dropout_att": 0.1, "stochastic_depth_drop_prob": 0.0,
            "stochastic_depth_mode": "linear", "stochastic_depth_start_layer": 1,
        },
        "transformer_encoder": {
            "_target_": "nemo.collections.asr.modules.transformer.transformer_encoders.TransformerEncoder",
            "num_layers": 1 if tiny else 18, "hidden_size": tf, "inner_size": 2 * tf if tiny else 768,
            "num_attention_heads": 2 if tiny else 8,
            "attn_score_dropout": 0.5, "attn_layer_dropout": 0.5, "ffn_dropout": 0.5, "hidden_act": "relu",
            "pre_ln": False, "pre_ln_final_layer_norm": True,
        },
        "loss": {"_target_": "nemo.collections.asr.losses.bce_loss.BCELoss", "weight": None, "reduction": "mean"},
    }


def save_tiny_sortformer(path: Path) -> Path:
    """A tiny random Sortformer saved as a .nemo file, as NeMo's from_pretrained downloads one."""
    import torch
    from nemo.collections.asr.models import SortformerEncLabelModel
    from omegaconf import OmegaConf

    torch.manual_seed(0)
    path.parent.mkdir(parents=True, exist_ok=True)
    SortformerEncLabelModel(cfg=OmegaConf.create(sortformer_config())).save_to(str(path))
    return path


# --- Whisper in transformers' format ---------------------------------------------------------
YUE_ID = 50358  # large-v3 added <|yue|> here
TINY = dict(d_model=64, encoder_layers=2, decoder_layers=2, heads=4, ffn=128, mel_bins=80,
            alignment_heads=[[1, 0], [1, 2], [1, 3]])


def whisper_tokenizer(source: Path, folder: Path, vocab_size: int = 51865):
    """Whisper's multilingual tokenizer from `source`'s tokenizer.json (51865 tokens, as in tiny …
    large-v2); vocab_size 51866 adds <|yue|> the way large-v3 did, every later id one higher."""
    from transformers import WhisperTokenizer

    data = json.loads((Path(source) / "tokenizer.json").read_text(encoding="utf-8"))
    if vocab_size == 51866:
        for token in data["added_tokens"]:
            token["id"] += token["id"] >= YUE_ID
        yue = dict(data["added_tokens"][0], id=YUE_ID, content="<|yue|>")
        data["added_tokens"].insert(YUE_ID - data["added_tokens"][0]["id"], yue)
        for special in data["post_processor"]["special_tokens"].values():
            special["ids"] = [i + (i >= YUE_ID) for i in special["ids"]]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tokenizer.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    tokenizer = WhisperTokenizer.from_pretrained(folder)
    assert len(tokenizer) == vocab_size
    return tokenizer


def save_random_whisper(folder: Path, tokenizer, *, d_model, encoder_layers, decoder_layers, heads, ffn, mel_bins,
                        alignment_heads, device="cpu", dtype=None, **generation) -> Path:
    """A randomly initialised Whisper with these dimensions and the generation config of OpenAI's
    checkpoints (language and task tokens, timestamps, alignment heads), saved as a download is."""
    import torch
    from transformers import (
        GenerationConfig,
        WhisperConfig,
        WhisperFeatureExtractor,
        WhisperForConditionalGeneration,
        WhisperProcessor,
    )
    from transformers.models.whisper.tokenization_whisper import LANGUAGES

    vocab = tokenizer.get_vocab()
    eot, sot = vocab["<|endoftext|>"], vocab["<|startoftranscript|>"]
    WhisperProcessor(WhisperFeatureExtractor(feature_size=mel_bins), tokenizer).save_pretrained(folder)
    config = WhisperConfig(
        vocab_size=len(tokenizer), num_mel_bins=mel_bins, d_model=d_model, encoder_layers=encoder_layers,
        decoder_layers=decoder_layers, encoder_attention_heads=heads, decoder_attention_heads=heads,
        encoder_ffn_dim=ffn, decoder_ffn_dim=ffn, decoder_start_token_id=sot, pad_token_id=eot, bos_token_id=eot,
        eos_token_id=eot,
    )
    torch.manual_seed(0)
    with torch.device(device):
        model = WhisperForConditionalGeneration(config).to(dtype or torch.float32)
    model.generation_config = GenerationConfig(
        decoder_start_token_id=sot, bos_token_id=eot, eos_token_id=eot, pad_token_id=eot, max_length=448,
        is_multilingual=True, no_timestamps_token_id=vocab["<|notimestamps|>"], prev_sot_token_id=vocab["<|startofprev|>"],
        lang_to_id={f"<|{code}|>": vocab[f"<|{code}|>"] for code in LANGUAGES if f"<|{code}|>" in vocab},
        task_to_id={task: vocab[f"<|{task}|>"] for task in ("transcribe", "translate")},
        alignment_heads=alignment_heads, begin_suppress_tokens=[220, eot], max_initial_timestamp_index=50,
        **generation,
    )
    model.save_pretrained(folder)
    return folder


# --- Gemma 3 (the summary's model family) ------------------------------------------------------
GEMMA_CHAT_TEMPLATE = (  # Gemma 3 -it's chat template for user turns, as its tokenizer_config.json has it
    "{{ bos_token }}{% for message in messages %}"
    "{{ '<start_of_turn>' + ('model' if message['role'] == 'assistant' else 'user') + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<start_of_turn>model\\n' }}{% endif %}"
)


def gemma_tokenizer(texts: list[str], vocab_size: int = 1000):
    """A byte-level BPE trained on `texts`, with Gemma's special tokens and chat template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False,
                                  special_tokens=["<pad>", "<eos>", "<bos>", "<start_of_turn>", "<end_of_turn>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    backend.train_from_iterator(texts, trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<bos>", eos_token="<eos>", pad_token="<pad>")
    tokenizer.chat_template = GEMMA_CHAT_TEMPLATE
    return tokenizer


def gemma3_config(vocab_size: int, tiny: bool = True, **extra):
    """google/gemma-3-1b-it's config.json (5 sliding-window layers to 1 global); tiny: the same
    layer pattern at toy width, with a sliding window short enough for test prompts to pass it."""
    from transformers import Gemma3TextConfig

    shape = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=6, num_attention_heads=4,
                 num_key_value_heads=1, head_dim=16, query_pre_attn_scalar=16, sliding_window=32) if tiny else \
        dict(hidden_size=1152, intermediate_size=6912, num_hidden_layers=26, num_attention_heads=4,
             num_key_value_heads=1, head_dim=256, query_pre_attn_scalar=256, sliding_window=512)
    return Gemma3TextConfig(
        vocab_size=vocab_size, max_position_embeddings=32768, rms_norm_eps=1e-6, hidden_activation="gelu_pytorch_tanh",
        attn_logit_softcapping=None, final_logit_softcapping=None, bos_token_id=2, eos_token_id=[1, 4], pad_token_id=0,
        tie_word_embeddings=True, **{**shape, **extra},
    )


def save_tiny_gemma3(folder: Path, texts: list[str] = SENTENCES, **config) -> Path:
    """A tiny random Gemma3ForCausalLM with a chat template, as save_pretrained writes it."""
    import torch
    from transformers import Gemma3ForCausalLM

    tokenizer = gemma_tokenizer(texts, vocab_size=400)
    torch.manual_seed(0)
    model = Gemma3ForCausalLM(gemma3_config(len(tokenizer), **config))
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(folder)
    model.save_pretrained(folder)
    return folder


# --- multilingual-e5-small (search by meaning's default model) -----------------------------------
def e5_small_config(vocab_size: int = 250037, tiny: bool = True):
    """intfloat/multilingual-e5-small's config.json (a 12-layer BERT of width 384 reading XLM-R's
    250k word pieces); tiny: the same family at toy width."""
    from transformers import BertConfig

    shape = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64) if tiny else \
        dict(hidden_size=384, num_hidden_layers=12, num_attention_heads=12, intermediate_size=1536)
    return BertConfig(vocab_size=vocab_size, max_position_embeddings=512, type_vocab_size=2, hidden_act="gelu",
                      layer_norm_eps=1e-12, pad_token_id=0, **shape)


def save_random_e5(folder: Path, texts: list[str] = SENTENCES, tiny: bool = True) -> Path:
    """A randomly initialised multilingual-e5-small (tiny, or of its real shape) as sentence-transformers
    saves it: the BERT, a Unigram tokenizer like XLM-R's trained on `texts`, mean pooling, normalising.
    Name the folder with "e5" in it, as the hub's is, for iGot to give it E5's prefixes."""
    import torch
    from sentence_transformers import SentenceTransformer, models
    from transformers import BertModel

    tokenizer = xlmr_like_tokenizer(texts, 2000)
    tokenizer.model_max_length = 512
    torch.manual_seed(0)
    config = e5_small_config(250037 if not tiny else max(len(tokenizer), 64), tiny)
    config.pad_token_id = 1
    work = folder / "transformer"
    work.mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(work)
    BertModel(config).save_pretrained(work)
    transformer = models.Transformer(str(work), max_seq_length=512)
    model = SentenceTransformer(modules=[transformer, models.Pooling(config.hidden_size, "mean"), models.Normalize()])
    model.save(str(folder))
    import shutil

    shutil.rmtree(work)
    return folder
