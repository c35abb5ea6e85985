# Install coder on Windows: download the release binary, check it against the release's
# SHA256SUMS, and put it in place atomically. Works in Windows PowerShell 5.1 and PowerShell 7:
#
#   irm https://github.com/coder-dev/coder/releases/latest/download/install.ps1 | iex
#
# Environment:
#   CODER_VERSION        the release to install, e.g. 0.1.0 (default: the latest release)
#   CODER_INSTALL_DIR    where coder.exe goes (default: ~\.local\bin, created if missing)
#   CODER_DOWNLOAD_BASE  where releases are, laid out as <base>/v<version>/<asset>
#                        (default: the GitHub releases of coder-dev/coder)
#
# On any failure it prints one line, sets a non-zero exit code and installs nothing.

$CoderGitHubRepo = 'coder-dev/coder'

function Stop-CoderInstall([string]$Message) {
  throw [System.InvalidOperationException]::new($Message)
}

function Get-CoderFile([string]$Url, [string]$OutFile) {
  try {
    Invoke-WebRequest -Uri $Url -OutFile $OutFile -UseBasicParsing -ErrorAction Stop
    return $true
  } catch {
    return $false
  }
}

# name -> lowercase sha256, from SHA256SUMS lines "<hex>  <name>" (or "<hex> *<name>").
function Read-Sha256Sums([string]$Path) {
  $sums = @{}
  foreach ($line in Get-Content -LiteralPath $Path) {
    if ($line -match '^\s*([0-9a-fA-F]{64}) [ *]?\*?(\S+)\s*$') {
      $sums[$Matches[2]] = $Matches[1].ToLowerInvariant()
    }
  }
  return $sums
}

function Install-Coder {
  if ($PSVersionTable.PSVersion.Major -ge 6 -and -not $IsWindows) {
    Stop-CoderInstall 'this is not Windows: run install.sh instead (curl -fsSL .../install.sh | sh)'
  }
  $machine = if ($env:PROCESSOR_ARCHITEW6432) { $env:PROCESSOR_ARCHITEW6432 } else { $env:PROCESSOR_ARCHITECTURE }
  switch ($machine) {
    'AMD64' { $platform = 'windows-x64' }
    # Windows 11 on Arm runs x64 programs under its built-in emulation.
    'ARM64' { $platform = 'windows-x64' }
    default { Stop-CoderInstall "no coder build for this processor ($machine); Windows builds exist for x64 (and run on Arm64 under emulation)" }
  }

  $base = if ($env:CODER_DOWNLOAD_BASE) { $env:CODER_DOWNLOAD_BASE } else { "https://github.com/$CoderGitHubRepo/releases/download" }
  $base = $base.TrimEnd('/')
  $dir = if ($env:CODER_INSTALL_DIR) { $env:CODER_INSTALL_DIR } else { Join-Path $HOME '.local\bin' }
  $version = if ($env:CODER_VERSION) { $env:CODER_VERSION } else { 'latest' }
  $version = $version -replace '^v', ''

  $script:CoderTemp = Join-Path ([System.IO.Path]::GetTempPath()) ("coder-install-" + [guid]::NewGuid().ToString('N'))
  New-Item -ItemType Directory -Path $script:CoderTemp -Force | Out-Null

  if ($version -eq 'latest') {
    # GitHub serves the latest release's files at .../releases/latest/download/; a mirror at <base>/latest/.
    $latestUrl = if ($base -like '*/releases/download') { ($base -replace '/download$', '') + '/latest/download/SHA256SUMS' } else { "$base/latest/SHA256SUMS" }
    $latestSums = Join-Path $script:CoderTemp 'latest-sums'
    if (-not (Get-CoderFile $latestUrl $latestSums)) {
      Stop-CoderInstall "could not download $latestUrl to find the latest release (set CODER_VERSION to pick one)"
    }
    $version = $null
    foreach ($name in (Read-Sha256Sums $latestSums).Keys) {
      if ($name -match "^coder-(.+)-$platform\.exe$") { $version = $Matches[1] }
    }
    if (-not $version) { Stop-CoderInstall "the latest release has no coder build for $platform ($latestUrl lists none)" }
  }
  if ($version -notmatch '^[0-9A-Za-z.+-]+$') {
    Stop-CoderInstall "CODER_VERSION=$version is not a version such as 0.1.0"
  }

  $asset = "coder-$version-$platform.exe"
  $sumsUrl = "$base/v$version/SHA256SUMS"
  $sumsFile = Join-Path $script:CoderTemp 'SHA256SUMS'
  if (-not (Get-CoderFile $sumsUrl $sumsFile)) {
    Stop-CoderInstall "could not download ${sumsUrl}: is $version a released version of coder?"
  }
  $expected = (Read-Sha256Sums $sumsFile)[$asset]
  if (-not $expected) { Stop-CoderInstall "release v$version has no coder build for $platform ($asset is not in its SHA256SUMS)" }

  $assetUrl = "$base/v$version/$asset"
  $download = Join-Path $script:CoderTemp $asset
  if (-not (Get-CoderFile $assetUrl $download)) { Stop-CoderInstall "could not download $assetUrl" }
  $actual = (Get-FileHash -LiteralPath $download -Algorithm SHA256).Hash.ToLowerInvariant()
  if ($actual -ne $expected) {
    Stop-CoderInstall "checksum mismatch for ${asset}: SHA256SUMS says $expected, the download is $actual; nothing was installed"
  }

  # Stage beside the target so the last step is a rename on one volume, and run the staged
  # copy first: a binary that cannot run here never replaces a working one.
  try { New-Item -ItemType Directory -Path $dir -Force -ErrorAction Stop | Out-Null } catch {
    Stop-CoderInstall "could not create $dir (set CODER_INSTALL_DIR to a directory you can write)"
  }
  $target = Join-Path $dir 'coder.exe'
  $script:CoderStaged = Join-Path $dir (".coder.install.$PID.exe")
  try { Copy-Item -LiteralPath $download -Destination $script:CoderStaged -ErrorAction Stop } catch {
    Stop-CoderInstall "could not write to $dir (set CODER_INSTALL_DIR to a directory you can write)"
  }
  try {
    $output = @(& $script:CoderStaged --version)[0]
    $status = $LASTEXITCODE
  } catch {
    $output = $_.Exception.Message
    $status = 1
  }
  if ($status -ne 0) { Stop-CoderInstall "the downloaded $asset does not run on this machine: $output" }
  try {
    if (Test-Path -LiteralPath $target) {
      [System.IO.File]::Replace($script:CoderStaged, $target, [NullString]::Value)
    } else {
      [System.IO.File]::Move($script:CoderStaged, $target)
    }
  } catch {
    Stop-CoderInstall "could not replace $target (is coder running? close it and try again)"
  }
  $script:CoderStaged = $null

  Write-Host "$output installed at $target"
  $onPath = ($env:Path -split ';') | Where-Object { $_.TrimEnd('\') -ieq $dir.TrimEnd('\') }
  if (-not $onPath) {
    Write-Host ''
    Write-Host "$dir is not on your PATH. To run coder by name, add it (then open a new terminal):"
    Write-Host "  [Environment]::SetEnvironmentVariable('Path', '$dir;' + [Environment]::GetEnvironmentVariable('Path', 'User'), 'User')"
  }
}

$ErrorActionPreference = 'Stop'
$ProgressPreference = 'SilentlyContinue'
if ($PSVersionTable.PSVersion.Major -lt 6) {
  [Net.ServicePointManager]::SecurityProtocol = [Net.ServicePointManager]::SecurityProtocol -bor [Net.SecurityProtocolType]::Tls12
}
$script:CoderTemp = $null
$script:CoderStaged = $null
$failed = $null
try {
  Install-Coder
} catch {
  $failed = $_.Exception.Message
} finally {
  if ($script:CoderStaged) { Remove-Item -LiteralPath $script:CoderStaged -Force -ErrorAction SilentlyContinue }
  if ($script:CoderTemp) { Remove-Item -LiteralPath $script:CoderTemp -Recurse -Force -ErrorAction SilentlyContinue }
}
if ($failed) {
  [Console]::Error.WriteLine("coder install: $failed")
  # Run as a file, exit with 1; piped into iex, leave the user's session open.
  if ($PSCommandPath) { exit 1 }
  $global:LASTEXITCODE = 1
}
