;;; Driven by tests/test_lsp_editors.py: Emacs in batch mode, eglot, editors/emacs/qlint-eglot.el.
(package-initialize)  ; Debian's elpa-eglot lives in the system package directory
(require 'eglot)
(require 'flymake)
(setq qlint-server-command (json-parse-string (getenv "QLINT_EMACS_CMD") :array-type 'list))
(load (getenv "QLINT_EMACS_SNIPPET"))
(find-file (getenv "QLINT_EMACS_FILE"))
(python-mode)
;; `eglot-ensure' waits for the command loop, which batch mode never runs: start it directly.
(apply #'eglot (eglot--guess-contact))
(with-timeout (60 (princ "TIMEOUT\n") (kill-emacs 1))
  (while (null (flymake-diagnostics))
    (accept-process-output nil 0.1)))
(dolist (d (flymake-diagnostics))
  (princ (format "flymake: line %d %s %s\n"
                 (line-number-at-pos (flymake-diagnostic-beg d))
                 (flymake-diagnostic-type d)
                 (flymake-diagnostic-text d))))
(kill-emacs 0)
