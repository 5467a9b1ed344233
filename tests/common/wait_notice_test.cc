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
