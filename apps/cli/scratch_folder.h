// A fresh temporary folder (a bench run's rendezvous stores and figures, the transfer
// probe's store), removed with everything in it when it goes out of scope.
#pragma once

#include <string>

namespace baton_app {

class ScratchFolder {
 public:
  // Creates $TMPDIR/<prefix>-XXXXXX (or /tmp/…). Throws baton::Error when it cannot.
  explicit ScratchFolder(const std::string& prefix = "baton-bench");
  ~ScratchFolder();
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;

  const std::string& path() const { return path_; }
  // path()/name, created as an empty folder.
  std::string make_subfolder(const std::string& name) const;

 private:
  std::string path_;
};

}  // namespace baton_app
