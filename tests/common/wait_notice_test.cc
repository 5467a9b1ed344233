#include "baton/wait_notice.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "baton/log.h"
#include "stderr_capture.h"

namespace {

using namespace std::chrono_literals;
using testing::HasSubstr;

// The tests wait for what the watcher writes, never for a time: the only deadline is a hang
// guard. A notice is due after the delay; a wait that ends before it is never reported.
class WaitNoticeTest : public testing::Test {
 protected:
  void SetUp() override { baton::set_log_level(baton::LogLevel::kInfo); }
  void TearDown() override { baton::set_wait_notice_delay(5000ms); }

  // True once `text` has been written; false after the hang guard (60 s).
  static bool written(const baton_test::StderrCapture& capture, const std::string& text) {
    const auto guard = std::chrono::steady_clock::now() + 60s;
    while (capture.so_far().find(text) == std::string::npos) {
      if (std::chrono::steady_clock::now() > guard) return false;
      std::this_thread::sleep_for(10ms);
    }
    return true;
  }
};

TEST_F(WaitNoticeTest, ALongWaitSaysWhatItWaitsForAndWhenItEnds) {
  baton::set_wait_notice_delay(300ms);
  baton_test::StderrCapture capture;
  {
    const baton::WaitNotice notice("runtime", "the gradients of stage 1 from rank 1");
    ASSERT_TRUE(written(capture, "still waiting for the gradients of stage 1")) << capture.text();
  }
  const std::string text = capture.text();
  EXPECT_THAT(text, HasSubstr("info  runtime: still waiting for the gradients of stage 1 from "
                              "rank 1 ("));
  EXPECT_THAT(text, HasSubstr(" so far)"));
  EXPECT_THAT(text, HasSubstr("info  runtime: stopped waiting for the gradients of stage 1 from "
                              "rank 1 after "));
}

// Waits that end long before the delay (2 s against microseconds) are never reported, even
// after the watcher has looked again: it reports the later, lasting one.
TEST_F(WaitNoticeTest, AShortWaitIsSilent) {
  baton::set_wait_notice_delay(2000ms);
  baton_test::StderrCapture capture;
  for (int i = 0; i < 1000; ++i) {
    const baton::WaitNotice notice("runtime", "nothing much");
  }
  {
    const baton::WaitNotice lasting("runtime", "the marker");
    ASSERT_TRUE(written(capture, "still waiting for the marker")) << capture.text();
  }
  const std::string text = capture.text();
  EXPECT_THAT(text, testing::Not(HasSubstr("nothing much")));
}

TEST_F(WaitNoticeTest, SeveralWaitsAreNamedApart) {
  baton::set_wait_notice_delay(300ms);
  baton_test::StderrCapture capture;
  {
    const baton::WaitNotice first("store", "rank 1 at rendezvous");
    const baton::WaitNotice second("transport", "gloo to connect");
    ASSERT_TRUE(written(capture, "store: still waiting for rank 1 at rendezvous"))
        << capture.text();
    ASSERT_TRUE(written(capture, "transport: still waiting for gloo to connect")) << capture.text();
  }
  const std::string text = capture.text();
  EXPECT_THAT(text, HasSubstr("stopped waiting for rank 1 at rendezvous after "));
  EXPECT_THAT(text, HasSubstr("stopped waiting for gloo to connect after "));
}

std::atomic<int> described{0};
std::string describe_count(const void* context) {
  ++described;
  return "receive " + std::to_string(*static_cast<const int*>(context));
}

// A receive on the hot path pays no formatting: the text is built only for a wait that lasts.
TEST_F(WaitNoticeTest, ADescriptionIsBuiltOnlyForAWaitThatLasts) {
  baton::set_wait_notice_delay(2000ms);
  baton_test::StderrCapture capture;
  described = 0;
  const int receive = 7;
  for (int i = 0; i < 1000; ++i) {
    const baton::WaitNotice notice("runtime", &describe_count, &receive);
  }
  EXPECT_EQ(described, 0);
  {
    const baton::WaitNotice notice("runtime", &describe_count, &receive);
    ASSERT_TRUE(written(capture, "still waiting for receive 7 (")) << capture.text();
  }
  EXPECT_EQ(described, 1);
  const std::string text = capture.text();
  EXPECT_THAT(text, HasSubstr("stopped waiting for receive 7 after "));
}

}  // namespace
