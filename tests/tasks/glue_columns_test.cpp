// run_glue.py's column and label choices.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.h"
#include "tasks/sequence_classification/glue_columns.h"

TEST(GlueColumns, TaskToKeys) {
  EXPECT_EQ("premise", ct::tasks::glue_task_columns("mnli").first);
  EXPECT_EQ("hypothesis", *ct::tasks::glue_task_columns("mnli").second);
  EXPECT_FALSE(ct::tasks::glue_task_columns("sst2").second);
  EXPECT_EQ("question2", *ct::tasks::glue_task_columns("qqp").second);
  EXPECT_THAT([] { ct::tasks::glue_task_columns("sst-2"); },
              testing::ThrowsMessage<ct::Error>(testing::HasSubstr("--task_name sst-2 is not a GLUE task")));
}

TEST(GlueColumns, LocalFilesPreferSentence1And2ElseTheFirstColumnsBesidesLabel) {
  auto cols = ct::tasks::local_text_columns({"idx", "label", "sentence2", "sentence1"});
  EXPECT_EQ("sentence1", cols.first);
  EXPECT_EQ("sentence2", *cols.second);
  cols = ct::tasks::local_text_columns({"label", "review", "title", "stars"});
  EXPECT_EQ("review", cols.first);
  EXPECT_EQ("title", *cols.second);
  cols = ct::tasks::local_text_columns({"text", "label"});
  EXPECT_EQ("text", cols.first);
  EXPECT_FALSE(cols.second);
  EXPECT_THAT([] { ct::tasks::local_text_columns({"label"}); },
              testing::ThrowsMessage<ct::Error>(testing::HasSubstr("no column besides 'label'")));
}

TEST(GlueColumns, LabelListIsSortedAndDistinct) {
  EXPECT_THAT(ct::tasks::sorted_label_list(std::vector<std::string>{"pos", "neg", "pos", "Neutral"}),
              testing::ElementsAre("Neutral", "neg", "pos"));
  EXPECT_THAT(ct::tasks::sorted_label_list(std::vector<int64_t>{10, 2, 2, -1}),
              testing::ElementsAre(-1, 2, 10));
}
