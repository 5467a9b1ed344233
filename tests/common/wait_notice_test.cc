#include "baton/wait_notice.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "baton/log.h"
#include "stderr_capture.h"

namespace {

using namespace std::chrono_literals;
using testing::HasSubstr;

class WaitNoticeTest : public testing::Test {
 protected:
  void SetUp() override {
    baton::set_log_level(baton::LogLevel::kInfo);
    baton::set_wait_notice_delay(300ms);
  }
  void TearDown() override { baton::set_wait_notice_delay(5000ms); }
};

TEST_F(WaitNoticeTest, ALongWaitSaysWhatItWaitsForAndWhenItEnds) {
  baton_test::StderrCapture capture;
  {
    const baton::WaitNotice notice("runtime", "the gradients of stage 1 from rank 1");
    std::this_thread::sleep_for(900ms);
  }
  const std::string text = capture.text();
  EXPECT_THAT(text, HasSubstr("info  runtime: still waiting for the gradients of stage 1 from "
                              "rank 1 ("));
  EXPECT_THAT(text, HasSubstr(" so far)"));
  EXPECT_THAT(text, HasSubstr("info  runtime: stopped waiting for the gradients of stage 1 from "
                              "rank 1 after "));
}

TEST_F(WaitNoticeTest, AShortWaitIsSilent) {
  baton_test::StderrCapture capture;
  for (int i = 0; i < 1000; ++i) {
    const baton::WaitNotice notice("runtime", "nothing much");
  }
  std::this_thread::sleep_for(600ms);  // the watcher looked at least twice
  EXPECT_EQ(capture.text(), "");
}

TEST_F(WaitNoticeTest, SeveralWaitsAreNamedApart) {
  baton_test::StderrCapture capture;
  {
    const baton::WaitNotice first("store", "rank 1 at rendezvous");
    const baton::WaitNotice second("transport", "gloo to connect");
    std::this_thread::sleep_for(800ms);
  }
  const std::string text = capture.text();
  EXPECT_THAT(text, HasSubstr("store: still waiting for rank 1 at rendezvous"));
  EXPECT_THAT(text, HasSubstr("transport: still waiting for gloo to connect"));
}

}  // namespace

namespace {

int described = 0;
std::string describe_count(const void* context) {
  ++described;
  return "receive " + std::to_string(*static_cast<const int*>(context));
}

// A receive on the hot path pays no formatting: the text is built only for a wait that lasts.
TEST_F(WaitNoticeTest, ADescriptionIsBuiltOnlyForAWaitThatLasts) {
  baton_test::StderrCapture capture;
  described = 0;
  const int receive = 7;
  for (int i = 0; i < 1000; ++i) {
    const baton::WaitNotice notice("runtime", &describe_count, &receive);
  }
  EXPECT_EQ(described, 0);
  {
    const baton::WaitNotice notice("runtime", &describe_count, &receive);
    std::this_thread::sleep_for(std::chrono::milliseconds(900));
  }
  EXPECT_EQ(described, 1);
  const std::string text = capture.text();
  EXPECT_THAT(text, HasSubstr("still waiting for receive 7 ("));
  EXPECT_THAT(text, HasSubstr("stopped waiting for receive 7 after "));
}

}  // namespace
