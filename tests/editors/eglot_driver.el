;;; eglot_driver.el --- Emacs (28+) eglot session against `memory-lens serve' -*- lexical-binding: t -*-
;; Driven by tests/editors/test_emacs.py. Env: ML_PYTHON, ML_MEMORY (file to open), ML_OUT (JSON),
;; ML_PACKAGE_DIR (a scratch package-user-dir).
(require 'package)
(setq package-user-dir (getenv "ML_PACKAGE_DIR"))
(add-to-list 'package-directory-list "/usr/share/emacs/site-lisp/elpa")
(package-initialize)
(require 'eglot)
(require 'json)
(require 'flymake)

(defvar ml-out nil)
(unless (fboundp 'markdown-mode)
  (define-derived-mode markdown-mode text-mode "Markdown"))
(add-to-list 'auto-mode-alist '("\\.md\\'" . markdown-mode))
(setq eglot-server-programs `((markdown-mode . (,(getenv "ML_PYTHON") "-m" "memory_lens" "serve"))))
(setq eglot-sync-connect t eglot-connect-timeout 60 eglot-autoshutdown nil)

(defun ml-finish (ok err)
  (let ((json-encoding-pretty-print nil))
    (with-temp-file (getenv "ML_OUT")
      (insert (json-encode (append (list :ok (if ok t :json-false)) (and err (list :error err)) ml-out)))))
  (kill-emacs (if ok 0 1)))

(condition-case e
    (progn
      (find-file (getenv "ML_MEMORY"))
      ;; eglot-ensure waits for post-command-hook, which never runs in batch: connect directly.
      (apply #'eglot (eglot--guess-contact))
      (let ((server (eglot-current-server)))
        (unless server (error "no eglot server"))
        (flymake-start)
        (let ((deadline (+ (float-time) 30)))
          (while (and (null (flymake-diagnostics)) (< (float-time) deadline))
            (accept-process-output nil 0.05)
            (flymake-start)))
        (setq ml-out (plist-put ml-out :diagnostics
                                (vconcat (mapcar (lambda (d) (list :line (line-number-at-pos (flymake-diagnostic-beg d))
                                                                   :type (symbol-name (flymake-diagnostic-type d))
                                                                   :text (flymake-diagnostic-text d)))
                                                 (flymake-diagnostics)))))
        (let ((m (jsonrpc-request server :memory/effective
                                  (list :textDocument (list :uri (eglot--path-to-uri (getenv "ML_MEMORY")))))))
          (setq ml-out (plist-put ml-out :effective_text (plist-get m :text))))
        (let ((acts (jsonrpc-request server :textDocument/codeAction
                                     (list :textDocument (eglot--TextDocumentIdentifier)
                                           :range (list :start '(:line 0 :character 0) :end '(:line 0 :character 7))
                                           :context (list :diagnostics [])))))
          (setq ml-out (plist-put ml-out :code_actions (vconcat (mapcar (lambda (a) (plist-get a :title)) acts)))))
        (eglot-shutdown server)
        (ml-finish t nil)))
  (error (ml-finish nil (format "%S" e))))
