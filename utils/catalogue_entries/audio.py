"""Every model class of torchaudio.models (0.13) at a small size: the
catalogue's `torchaudio` family. Lengths that models take as tensors are
inputs given as values (`--input lengths=2:i64=[6,6]`: every sequence full
length), so that the masks they size are traced. RNNTBeamSearch is left out:
it is inference-time decoding around an RNNT (which is an entry), with no
parameters of its own and a data-dependent search loop.
"""

import torch
import torchaudio.models as am

from . import Case

EXCLUDED = {
    "RNNTBeamSearch": "inference-time beam search around an RNNT (an "
                      "entry): no parameters, a data-dependent loop",
    "HuBERTPretrainModel": "its loss is not one static step: every call "
                           "draws the masked frames anew on the CPU "
                           "(_compute_mask_indices: their count sizes the "
                           "logits), and _compute_logits branches on the "
                           "values of its label embeddings (`if "
                           "neg_is_pos.any()`, a parameter compared with "
                           "itself), which a trace of shapes cannot know; "
                           "its encoder is Wav2Vec2Model's (an entry)",
}


def _wav2vec2(**extra):
    common = dict(
        extractor_mode="group_norm",
        extractor_conv_layer_config=[(8, 10, 5), (8, 3, 2)],
        extractor_conv_bias=False, encoder_embed_dim=16,
        encoder_projection_dropout=0.0, encoder_pos_conv_kernel=4,
        encoder_pos_conv_groups=2, encoder_num_layers=1,
        encoder_num_heads=2, encoder_attention_dropout=0.0,
        encoder_ff_interm_features=32, encoder_ff_interm_dropout=0.0,
        encoder_dropout=0.0, encoder_layer_norm_first=False,
        encoder_layer_drop=0.0)
    return {**common, **extra}


def _rnnt():
    return am.emformer_rnnt_model(
        input_dim=8, encoding_dim=8, num_symbols=5, segment_length=4,
        right_context_length=0, time_reduction_input_dim=8,
        time_reduction_stride=2, transformer_num_heads=2,
        transformer_ffn_dim=16, transformer_num_layers=1,
        transformer_dropout=0.0, transformer_activation="relu",
        transformer_left_context_length=0, transformer_max_memory_size=0,
        transformer_weight_init_scale_strategy="depthwise",
        transformer_tanh_on_mem=True, symbol_embedding_dim=8,
        num_lstm_layers=1, lstm_layer_norm=True,
        lstm_layer_norm_epsilon=1e-5, lstm_dropout=0.0)


def _tacotron2():
    return am.Tacotron2(
        n_mels=8, n_symbol=10, symbol_embedding_dim=16,
        encoder_embedding_dim=16, encoder_n_convolution=1,
        encoder_kernel_size=3, decoder_rnn_dim=16, decoder_max_step=20,
        decoder_dropout=0.0, attention_rnn_dim=16, attention_hidden_dim=8,
        attention_location_n_filter=4, attention_location_kernel_size=3,
        attention_dropout=0.0, prenet_dim=8, postnet_n_convolution=1,
        postnet_kernel_size=3, postnet_embedding_dim=8)


def _a(build, inputs, forward=None, targets=None, random=False):
    return Case(build=build, inputs=list(inputs), forward=forward,
                targets=targets, random=random)


CASES = {
    "Conformer": _a(lambda: am.Conformer(
        input_dim=8, num_heads=2, ffn_dim=16, num_layers=1,
        depthwise_conv_kernel_size=3), ["2x6x8", "lengths=2:i64=[6,6]"],
        forward=lambda m, x, n: m(x, n)[0]),
    "ConvTasNet": _a(lambda: am.ConvTasNet(
        num_sources=2, enc_kernel_size=4, enc_num_feats=8,
        msk_kernel_size=3, msk_num_feats=8, msk_num_hidden_feats=8,
        msk_num_layers=2, msk_num_stacks=1), ["2x1x32"]),
    "DeepSpeech": _a(lambda: am.DeepSpeech(n_feature=8, n_hidden=16,
                                           n_class=4), ["2x1x6x8"]),
    "Emformer": _a(lambda: am.Emformer(
        input_dim=8, num_heads=2, ffn_dim=16, num_layers=1,
        segment_length=4, right_context_length=1),
        ["2x9x8", "lengths=2:i64=[8,8]"],
        forward=lambda m, x, n: m(x, n)[0]),
    "HDemucs": _a(lambda: am.HDemucs(
        ["a", "b"], audio_channels=1, channels=4, nfft=64, depth=2),
        ["2x1x256"]),
    "RNNT": _a(_rnnt, ["2x8x8", "source_lengths=2:i64=[8,8]", "2x3:i64",
                       "target_lengths=2:i64=[3,3]"],
               forward=lambda m, *xs: m(*xs)[0]),
    "Tacotron2": _a(_tacotron2, ["2x5:i64", "token_lengths=2:i64=[5,5]",
                                 "2x8x6", "mel_lengths=2:i64=[6,6]"],
                    forward=lambda m, *xs: m(*xs)[:3],
                    random=True),  # its prenet's dropout is always on
    "Wav2Letter": _a(lambda: am.Wav2Letter(num_classes=4, input_type="mfcc",
                                           num_features=8), ["2x8x32"]),
    "Wav2Vec2Model": _a(lambda: am.wav2vec2_model(**_wav2vec2(
        aux_num_out=4)), ["2x64"], forward=lambda m, x: m(x)[0]),
    "WaveRNN": _a(lambda: am.WaveRNN(
        upsample_scales=[2, 2], n_classes=8, hop_length=4, n_res_block=1,
        n_rnn=8, n_fc=8, kernel_size=3, n_freq=8, n_hidden=8, n_output=8),
        ["2x1x16", "2x1x8x6"]),
}


def uncatalogued():
    """torchaudio.models module classes without an entry or exclusion."""
    import inspect
    return [n for n, c in sorted(vars(am).items())
            if inspect.isclass(c) and issubclass(c, torch.nn.Module)
            and n not in CASES and n not in EXCLUDED]
