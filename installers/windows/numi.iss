; Inno Setup script: per-user install of the PyInstaller folder build\out\numi (no admin rights),
; a Start-menu entry, an optional desktop icon, and an uninstaller.
; Build: iscc /DAppVersion=0.1.0 installers\windows\numi.iss   -> dist\Numi-Setup-0.1.0.exe
#ifndef AppVersion
  #define AppVersion "0.1.0"
#endif

[Setup]
AppId={{6E1C2B5A-3F0D-4C55-9A1E-9B8E3A7C1D42}
AppName=Numi
AppVersion={#AppVersion}
AppPublisher=Numi
DefaultDirName={localappdata}\Programs\Numi
DefaultGroupName=Numi
DisableProgramGroupPage=yes
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
OutputDir=..\..\dist
OutputBaseFilename=Numi-Setup-{#AppVersion}
SetupIconFile=..\..\desktop\assets\numi.ico
UninstallDisplayIcon={app}\numi.exe
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern
ArchitecturesInstallIn64BitMode=x64compatible

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked

[Files]
Source: "..\..\build\out\numi\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{userprograms}\Numi"; Filename: "{app}\numi.exe"
Name: "{userdesktop}\Numi"; Filename: "{app}\numi.exe"; Tasks: desktopicon

[Run]
Filename: "{app}\numi.exe"; Description: "{cm:LaunchProgram,Numi}"; Flags: nowait postinstall skipifsilent

[UninstallRun]
; Quit a running Numi before its files go (its data dir in %LOCALAPPDATA%\Numi is kept).
Filename: "{cmd}"; Parameters: "/C taskkill /IM numi.exe /T"; Flags: runhidden; RunOnceId: "StopNumi"
