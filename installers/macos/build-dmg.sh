#!/usr/bin/env bash
# Sign build/out/Numi.app, wrap it in dist/Numi-<version>.dmg, notarize and staple (macOS only).
set -euo pipefail
cd "$(dirname "$0")/../.."
APP=build/out/Numi.app
VERSION=$(python3 -c 'import re;print(re.search(r"__version__ = \"(.+)\"", open("backend/__init__.py").read())[1])')
DMG="dist/Numi-$VERSION.dmg"
mkdir -p dist
if [ -n "${MACOS_CERT_P12_BASE64:-}" ]; then  # CI: import the certificate into a throwaway keychain
  KC="$RUNNER_TEMP/numi.keychain-db"; KCPW=$(uuidgen)
  security create-keychain -p "$KCPW" "$KC"; security unlock-keychain -p "$KCPW" "$KC"
  echo "$MACOS_CERT_P12_BASE64" | base64 --decode > "$RUNNER_TEMP/cert.p12"
  security import "$RUNNER_TEMP/cert.p12" -k "$KC" -P "$MACOS_CERT_PASSWORD" -T /usr/bin/codesign
  security set-key-partition-list -S apple-tool:,apple: -k "$KCPW" "$KC"
  security list-keychains -d user -s "$KC" $(security list-keychains -d user | tr -d '"')
fi
if [ -n "${MACOS_SIGN_IDENTITY:-}" ]; then
  codesign --deep --force --options runtime --timestamp \
    --entitlements installers/macos/entitlements.plist --sign "$MACOS_SIGN_IDENTITY" "$APP"
  codesign --verify --deep --strict "$APP"
else
  echo "MACOS_SIGN_IDENTITY is not set: building an UNSIGNED .dmg (Gatekeeper will refuse it)" >&2
fi
rm -f "$DMG"
hdiutil create -volname Numi -srcfolder "$APP" -ov -format UDZO "$DMG"
if [ -n "${MACOS_SIGN_IDENTITY:-}" ]; then
  codesign --force --timestamp --sign "$MACOS_SIGN_IDENTITY" "$DMG"
  if [ -n "${APPLE_ID:-}" ]; then
    xcrun notarytool submit "$DMG" --apple-id "$APPLE_ID" --team-id "$APPLE_TEAM_ID" \
      --password "$APPLE_APP_PASSWORD" --wait
    xcrun stapler staple "$DMG"
  else
    echo "APPLE_ID is not set: signed but not notarized" >&2
  fi
fi
echo "$DMG"
