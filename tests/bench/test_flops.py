"""FLOPs counted from a model's shapes, against numbers worked out by hand."""
from transformers import BertConfig

from xlingua.bench.flops import Shapes, text_flops, total_flops

TOY = Shapes(layers=2, hidden=4, intermediate=8)


def test_toy_config_by_hand():
    # linear weights of a layer: q k v o 4 x 4*4 = 64, feed-forward 2 x 4*8 = 64
    assert TOY.linear_weights == 128
    # 3 tokens: 2 layers x (2*128*3 linear + 4*3*3*4 attention) = 2 x (768 + 144)
    assert TOY.input_flops(3) == 1824
    assert TOY.input_flops(1) == 2 * (256 + 16)
    # 7 tokens in windows of 3: two full windows and one of a single token
    assert text_flops(TOY, 7, window=3) == 2 * 1824 + 544
    assert text_flops(TOY, 3, window=3) == text_flops(TOY, 3) == 1824
    assert total_flops(TOY, [3, 7], window=3) == 1824 + 2 * 1824 + 544


def test_shapes_of_a_transformers_config_heads_cancel():
    for heads in (1, 2, 4):
        cfg = BertConfig(num_hidden_layers=2, hidden_size=4, intermediate_size=8, num_attention_heads=heads)
        assert Shapes.of(cfg) == TOY


def test_e5_small_by_hand():
    e5 = Shapes(layers=12, hidden=384, intermediate=1536)
    assert e5.linear_weights == 4 * 384 * 384 + 2 * 384 * 1536 == 1_769_472
    # 10 tokens: 12 x (2 * 1,769,472 * 10 + 4 * 100 * 384)
    assert e5.input_flops(10) == 12 * (35_389_440 + 153_600) == 426_516_480
