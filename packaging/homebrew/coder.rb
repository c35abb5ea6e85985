# coder's Homebrew formula, for the tap {{TAP}} (`brew install {{TAP}}/coder`).
# Made for each release from the template packaging/homebrew/coder.rb by
# scripts/package-homebrew.ts, which fills in the version and each binary's URL and
# sha256 (from the release's SHA256SUMS); the release workflow uploads it to the
# release and commits it to the tap.
class Coder < Formula
  desc "AI pair programmer for the terminal"
  homepage "https://github.com/{{GITHUB_REPO}}"
  version "{{VERSION}}"
  license "{{LICENSE}}"

  on_macos do
    on_arm do
      url "{{URL_DARWIN_ARM64}}"
      sha256 "{{SHA256_DARWIN_ARM64}}"
    end
    on_intel do
      url "{{URL_DARWIN_X64}}"
      sha256 "{{SHA256_DARWIN_X64}}"
    end
  end

  on_linux do
    on_arm do
      url "{{URL_LINUX_ARM64}}"
      sha256 "{{SHA256_LINUX_ARM64}}"
    end
    on_intel do
      url "{{URL_LINUX_X64}}"
      sha256 "{{SHA256_LINUX_X64}}"
    end
  end

  def install
    os = OS.mac? ? "darwin" : "linux"
    arch = Hardware::CPU.arm? ? "arm64" : "x64"
    bin.install "coder-#{version}-#{os}-#{arch}" => "coder"
  end

  test do
    assert_equal "coder #{version}", shell_output("#{bin}/coder --version").strip
  end
end
