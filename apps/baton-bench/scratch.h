// A fresh temporary folder for one bench run (rendezvous stores, the measuring rank's
// figures, ucx_perftest output), removed with everything in it when the run ends.
#pragma once

#include <string>

namespace baton_app {

class ScratchFolder {
 public:
  // Creates $TMPDIR/baton-bench-XXXXXX (or /tmp/…). Throws baton::Error when it cannot.
  ScratchFolder();
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
