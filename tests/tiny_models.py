"""Tiny randomly initialised models saved exactly as a download leaves them on disk (no model
hub here): their output is noise, the loading and inference code they go through is real."""

from __future__ import annotations

import json
from pathlib import Path

from igot.audio import SAMPLE_RATE

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
    from transformers import (Wav2Vec2Config, Wav2Vec2CTCTokenizer, Wav2Vec2FeatureExtractor, Wav2Vec2ForCTC,
                              Wav2Vec2Processor)

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


def save_tiny_punctuator(folder: Path) -> Path:
    """A tiny XLM-RoBERTa token classifier with punctuate-all's labels, and a Unigram tokenizer
    like XLM-R's, trained here on a few sentences."""
    import torch
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast, XLMRobertaConfig, XLMRobertaForTokenClassification

    backend = Tokenizer(models.Unigram())
    backend.normalizer = normalizers.NFKC()
    backend.pre_tokenizer = pre_tokenizers.Metaspace()
    backend.decoder = decoders.Metaspace()
    specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    trainer = trainers.UnigramTrainer(vocab_size=150, special_tokens=specials, unk_token="<unk>")
    backend.train_from_iterator(SENTENCES * 3, trainer)
    backend.post_processor = processors.TemplateProcessing(single="<s> $A </s>",
                                                           special_tokens=[("<s>", 0), ("</s>", 2)])
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<s>", eos_token="</s>", unk_token="<unk>",
                                        pad_token="<pad>", cls_token="<s>", sep_token="</s>", mask_token="<mask>")
    torch.manual_seed(0)
    labels = PUNCTUATION_LABELS
    config = XLMRobertaConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                              intermediate_size=64, max_position_embeddings=514, pad_token_id=1, bos_token_id=0,
                              eos_token_id=2, id2label=labels, label2id={v: k for k, v in labels.items()})
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(folder)
    XLMRobertaForTokenClassification(config).save_pretrained(folder)
    return folder


def tiny_sortformer_config() -> dict:
    """The published Sortformer's layout (see benchmarks/sortformer_gpu.py) at toy size: a 1-layer
    Conformer of width 32 and a 1-layer Transformer of width 16, 4 speakers."""
    from igot.nemo_diarize import MAX_SPEAKERS, STREAMING

    return {
        "sample_rate": 16000, "max_num_of_spks": MAX_SPEAKERS, "streaming_mode": True,
        "pil_weight": 0.5, "ats_weight": 0.5,
        "model_defaults": {"fc_d_model": 32, "tf_d_model": 16},
        "preprocessor": {
            "_target_": "nemo.collections.asr.modules.AudioToMelSpectrogramPreprocessor", "normalize": "per_feature",
            "window_size": 0.025, "sample_rate": 16000, "window_stride": 0.01, "window": "hann", "features": 128,
            "n_fft": 512, "frame_splicing": 1, "dither": 0.00001,
        },
        "sortformer_modules": {
            "_target_": "nemo.collections.asr.modules.sortformer_modules.SortformerModules",
            "num_spks": MAX_SPEAKERS, "fc_d_model": 32, "tf_d_model": 16, **STREAMING,
        },
        "encoder": {
            "_target_": "nemo.collections.asr.modules.ConformerEncoder", "feat_in": 128, "feat_out": -1, "n_layers": 1,
            "d_model": 32, "subsampling": "dw_striding", "subsampling_factor": 8, "subsampling_conv_channels": 16,
            "n_heads": 2, "self_attention_model": "rel_pos", "conv_kernel_size": 9,
        },
        "transformer_encoder": {
            "_target_": "nemo.collections.asr.modules.transformer.transformer_encoders.TransformerEncoder",
            "num_layers": 1, "hidden_size": 16, "inner_size": 32, "num_attention_heads": 2,
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
    SortformerEncLabelModel(cfg=OmegaConf.create(tiny_sortformer_config())).save_to(str(path))
    return path
