;;; qlint-eglot.el --- qlint's language server in Emacs, through eglot  -*- lexical-binding: t -*-

;; Emacs 29 and later ship eglot; on Emacs 28 install it (Debian: `elpa-eglot`).
;; Put this in your init file, or `(load "/path/to/editors/emacs/qlint-eglot.el")`.
;; Findings then show through flymake; quick fixes with `M-x eglot-code-actions`.

(defvar qlint-server-command '("qlint" "server")
  "How to start the qlint language server, e.g. (\"python3\" \"-m\" \"qlint\" \"server\").")

(defvar qlint-runtime nil
  "Runtime verdicts in the editor: \"on-save\" or \"off\"; nil leaves it to the project's
`[tool.qlint.runtime] editor'.")

(with-eval-after-load 'eglot
  (add-to-list 'eglot-server-programs
               `((python-mode python-ts-mode)
                 . ,(lambda (&rest _)
                      (append qlint-server-command
                              (when qlint-runtime
                                (list :initializationOptions
                                      (list :runtime qlint-runtime))))))))

(add-hook 'python-mode-hook #'eglot-ensure)
(add-hook 'python-ts-mode-hook #'eglot-ensure)

(provide 'qlint-eglot)
;;; qlint-eglot.el ends here
