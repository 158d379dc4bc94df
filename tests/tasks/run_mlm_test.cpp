// run_mlm's pieces that are pure functions: training from scratch (transformers' config defaults per family,
// update_from_string's typing, DistilBERT's attribute_map, unknown keys refused) and datasets' percent
// slicing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.h"
#include "tasks/masked_lm/run_mlm.h"
#include "tasks/text_splits.h"

namespace ct::tasks {
namespace {

using testing::HasSubstr;
using testing::ThrowsMessage;

TEST(RunMlm, ScratchConfigHasTransformersDefaults) {
  const auto bert = scratch_config("bert", "");
  EXPECT_EQ(bert.vocab_size, 30522);
  EXPECT_EQ(bert.hidden_size, 768);
  EXPECT_EQ(bert.num_hidden_layers, 12);
  EXPECT_EQ(bert.max_position_embeddings, 512);
  const auto roberta = scratch_config("roberta", "");
  EXPECT_EQ(roberta.pad_token_id, 1);
  EXPECT_EQ(roberta.positions, model::PositionScheme::after_padding_idx);
  const auto electra = scratch_config("electra", "");
  EXPECT_EQ(electra.embedding_size, 128);
  EXPECT_EQ(electra.hidden_size, 256);
  const auto distil = scratch_config("distilbert", "");
  EXPECT_EQ(distil.num_hidden_layers, 6);
  EXPECT_EQ(distil.type_vocab_size, 0);
}

TEST(RunMlm, OverridesAreTypedAsTheDefaultTheyReplace) {
  const auto c = scratch_config("bert",
                                "hidden_size=64,num_attention_heads=4,hidden_dropout_prob=0.25,"
                                "hidden_act=relu,layer_norm_eps=1e-5");
  EXPECT_EQ(c.hidden_size, 64);
  EXPECT_EQ(c.num_attention_heads, 4);
  EXPECT_DOUBLE_EQ(c.hidden_dropout_prob, 0.25);
  EXPECT_EQ(c.hidden_act, "relu");
  EXPECT_DOUBLE_EQ(c.layer_norm_eps, 1e-5);
  // DistilBertConfig.attribute_map: hidden_size sets dim.
  const auto d = scratch_config("distilbert", "hidden_size=32,n_heads=2,dropout=0");
  EXPECT_EQ(d.hidden_size, 32);
  EXPECT_EQ(d.num_attention_heads, 2);
  EXPECT_DOUBLE_EQ(d.hidden_dropout_prob, 0.0);
}

TEST(RunMlm, BadOverridesFailInOneLine) {
  EXPECT_THAT([] { scratch_config("gpt2", ""); }, ThrowsMessage<Error>(HasSubstr("--model_type: 'gpt2'")));
  EXPECT_THAT([] { scratch_config("bert", "n_embd=10"); },
              ThrowsMessage<Error>(HasSubstr("--config_overrides: key 'n_embd' is not a bert config field")));
  EXPECT_THAT([] { scratch_config("bert", "position_embedding_type=relative_key"); },
              ThrowsMessage<Error>(HasSubstr("key 'position_embedding_type'")));
  EXPECT_THAT([] { scratch_config("bert", "hidden_size=3.5"); },
              ThrowsMessage<Error>(HasSubstr("--config_overrides: hidden_size=3.5: expected an integer")));
  EXPECT_THAT([] { scratch_config("bert", "hidden_dropout_prob=high"); },
              ThrowsMessage<Error>(HasSubstr("hidden_dropout_prob=high: expected a number")));
  EXPECT_THAT([] { scratch_config("bert", "hidden_size"); },
              ThrowsMessage<Error>(HasSubstr("'hidden_size' is not key=value")));
  // The config's own validation, under the flag's name.
  EXPECT_THAT([] { scratch_config("bert", "hidden_size=30"); },
              ThrowsMessage<Error>(HasSubstr("--config_overrides: \"hidden_size\" 30 is not divisible")));
}

TEST(RunMlm, PercentBoundaryRoundsHalvesToEven) {
  EXPECT_EQ(percent_boundary(5, 300), 15);
  EXPECT_EQ(percent_boundary(10, 5), 0);  // 0.5 -> 0
  EXPECT_EQ(percent_boundary(5, 30), 2);  // 1.5 -> 2
  EXPECT_EQ(percent_boundary(5, 50), 2);  // 2.5 -> 2
  EXPECT_EQ(percent_boundary(0, 300), 0);
  EXPECT_EQ(percent_boundary(99, 1), 1);
}

}  // namespace
}  // namespace ct::tasks
